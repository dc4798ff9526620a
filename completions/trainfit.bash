# bash completion for trainfit(1): commands, each command's flags and their accepted values
# (read from `trainfit CMD --help` at completion time), model and GPU names (from
# `trainfit models` / `trainfit gpus`, so site catalogs count; a --catalog-dir on the
# line is passed on), and file names where a flag takes a file.
# Install as /usr/share/bash-completion/completions/trainfit.

# The trainfit to ask: the one on the command line when it is a path.
_trainfit_bin() {
  local bin=${COMP_WORDS[0]}
  [[ $bin == */* && -x $bin ]] || bin=$(type -P trainfit 2>/dev/null) || return 1
  printf '%s\n' "$bin"
}

# --catalog-dir DIR / --catalog-dir=DIR as written on the line (to pass on).
_trainfit_catalog_args() {
  local i
  for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
    case ${COMP_WORDS[i]} in
      --catalog-dir) [[ -n ${COMP_WORDS[i + 1]-} && i+1 -ne COMP_CWORD ]] && printf '%s\n' --catalog-dir "${COMP_WORDS[i + 1]}" ;;
      --catalog-dir=?*) [[ i -ne COMP_CWORD ]] && printf '%s\n' "${COMP_WORDS[i]}" ;;
    esac
  done
}

# Names in the first column of `trainfit models|gpus` (header skipped).
_trainfit_names() {
  local bin=$1 what=$2
  local -a extra
  mapfile -t extra < <(_trainfit_catalog_args)
  "$bin" "$what" "${extra[@]}" 2>/dev/null | awk 'NR > 1 && NF { print $1 }'
}

# A flag's description from `trainfit CMD --help`, wrapped lines joined.
_trainfit_flag_help() {
  local bin=$1 command=$2 flag=$3
  "$bin" "$command" --help 2>/dev/null | awk -v flag="$flag" '
    /^  -/ { if (found) exit; n = split($0, w, " "); for (i = 1; i <= n; i++) if (w[i] == flag) { found = 1; line = $0; next } }
    # A value list "[a|b|...]" longer than the column is cut mid-word: join it without a space.
    found && /^   +[^ ]/ { s = $0; sub(/^ +/, "", s); line = line (line ~ /\[[^] ]*$/ ? "" : " ") s; next }
    found { exit }
    END { if (found) print line }'
}

_trainfit() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local bin
  bin=$(_trainfit_bin) || return 0
  COMPREPLY=()

  # The command: the first word that is not the global --catalog-dir and its value.
  local command="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --catalog-dir) ((i++)) ;;
      --catalog-dir=*) ;;
      -*) ;;
      *) command=${COMP_WORDS[i]}; break ;;
    esac
  done

  case $prev in
    --catalog-dir) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
  esac
  if [[ -z $command ]]; then
    local commands
    commands=$("$bin" --help 2>/dev/null | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--help --version --catalog-dir" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
    return 0
  fi

  # A flag's value: catalog names, files, or the values its help lists.
  local flag=$prev value_prefix="" list_prefix=""
  if [[ $cur == --*=* ]]; then
    flag=${cur%%=*}
    value_prefix=$flag=
    cur=${cur#*=}
  fi
  if [[ $flag == --* ]]; then
    # Comma-separated lists (policy --models a,b): complete the last item.
    if [[ $cur == *,* ]]; then
      list_prefix=${cur%,*},
      cur=${cur##*,}
    fi
    local words=""
    case $flag in
      --model | --models | --llm-model) words=$(_trainfit_names "$bin" models) ;;
      --gpu | --gpu-types | --gpu_type) words=$(_trainfit_names "$bin" gpus) ;;
      --request | --config | --hf-config | --out | --audit | --jobs | --conf | --cacert | --access-log)
        COMPREPLY=($(compgen -f -- "$cur"))
        [[ -n $value_prefix ]] && COMPREPLY=("${COMPREPLY[@]/#/$value_prefix}")
        return 0 ;;
      *)
        local help desc takes_value=""
        help=$(_trainfit_flag_help "$bin" "$command" "$flag")
        help=$(tr -s ' ' <<<"$help")
        help=${help# }
        # boost::program_options' layout: "--flag [ARG] [(=default)] description";
        # ARG is "arg" or an upper-case word (VALUE, FILE, HOST:PORT).
        # A switch with a value ("--dropout [=BOOL(=true)]") takes one too.
        local re='^(-[a-zA-Z] \[ )?--[a-z0-9_-]+( \])?( (arg|[A-Z][A-Z0-9:_./,=-]*|\[=[A-Z]+\(=[^)]*\)\]))?( \(=[^)]*\))?( (.*))?$'
        if [[ $help =~ $re ]]; then
          takes_value=${BASH_REMATCH[3]}
          desc=${BASH_REMATCH[7]}
        fi
        desc=${desc% }
        # The values: a list "a|b|c" in brackets ("[a|b|c]", "[a|b, or ...]", "[a|b; default: a]")
        # or at the start of the description ("a|b|c (default a)"), as the commands print
        # their tables (request fields' accepted values, the formats).
        local in_brackets='\[([a-z0-9_.-]+(\|[a-z0-9_.-]+)+)[],;]' leading='^([a-z0-9_.-]+(\|[a-z0-9_.-]+)+)( |$)'
        if [[ -n $takes_value ]]; then
          if [[ $desc =~ $in_brackets || $desc =~ $leading ]]; then
            words=${BASH_REMATCH[1]//|/ }
          else
            return 0  # a free value: nothing to offer
          fi
        fi ;;
    esac
    if [[ -n $words || -n $value_prefix ]]; then
      COMPREPLY=($(compgen -W "$words" -- "$cur"))
      COMPREPLY=("${COMPREPLY[@]/#/$value_prefix$list_prefix}")
      return 0
    fi
  fi

  if [[ $cur == -* ]]; then
    local flags
    flags=$("$bin" "$command" --help 2>/dev/null | grep -oE '^  (-[a-zA-Z] \[ )?--[a-z0-9_-]+' | grep -oE -- '--[a-z0-9_-]+')
    COMPREPLY=($(compgen -W "$flags --catalog-dir" -- "$cur"))
  elif [[ $command == check-config ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}

complete -F _trainfit trainfit
