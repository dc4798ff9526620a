// libcurl, loaded when an endpoint is first used (dlopen of libcurl.so.4), not when the SPANK
// plugin or the CLI starts: linking it made every sbatch, salloc and srun load ~30 more
// libraries and run their constructors (gnutls, p11-kit, krb5) — 9.9 ms instead of 1.5 ms for a
// bare program on Debian 12 — whether or not endpoint= was set.
#pragma once

#include <curl/curl.h>

#include "trainfit/error.h"

namespace trainfit::remote {

struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL* handle, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL* handle);
  CURLcode (*easy_getinfo)(CURL* handle, CURLINFO info, ...);
  void (*easy_cleanup)(CURL* handle);
  const char* (*easy_strerror)(CURLcode code);
  curl_slist* (*slist_append)(curl_slist* list, const char* text);
  void (*slist_free_all)(curl_slist* list);
  CURLU* (*url)();
  void (*url_cleanup)(CURLU* handle);
  CURLUcode (*url_set)(CURLU* handle, CURLUPart part, const char* content, unsigned int flags);
  CURLUcode (*url_get)(const CURLU* handle, CURLUPart part, char** content, unsigned int flags);
  void (*free)(void* pointer);
};

// The loaded and initialised library (curl_global_init done once), or kUnavailable saying
// why not: libcurl.so.4 cannot be loaded or lacks a function.
Result<const CurlApi*> curl_api();

}  // namespace trainfit::remote
