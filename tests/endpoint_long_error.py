"""A hostile endpoint: every POST gets a 400 that is a well-formed trainfit error whose
message is SIZE bytes (default 200 KiB) with a line break and a forged line inside. Prints
its port on stdout. Usage: endpoint_long_error.py [SIZE]"""
import http.server
import json
import sys

SIZE = int(sys.argv[1]) if len(sys.argv) > 1 else 200 * 1024
FORGED = "\ntrainfit: forged line"
MESSAGE = "e" * (SIZE - len(FORGED) - 1) + FORGED + "Z"  # exactly SIZE bytes
BODY = json.dumps({"error": {"code": "invalid_value", "field": "model", "message": MESSAGE}}).encode()


class LongError(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        try:
            self.wfile.write(BODY)
        except OSError:
            pass

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), LongError)
print(server.server_address[1], flush=True)
server.serve_forever()
