# bash completion for instant-upload                              -*- shell-script -*-
#
# Loaded by itself where the bash-completion package is installed; without it, source this
# file from ~/.bashrc. The two helpers it uses from that package have plain stand-ins here.

# cur, prev, words and cword, as bash-completion's _init_completion sets them.
_instant_upload_init() {
    if declare -F _init_completion >/dev/null; then
        _init_completion
        return
    fi
    COMPREPLY=()
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
}

# File names (-d: folders only), as bash-completion's _filedir offers them.
_instant_upload_files() {
    if declare -F _filedir >/dev/null; then
        _filedir "$@"
        return
    fi
    local IFS=$'\n'
    compopt -o filenames 2>/dev/null
    if [[ ${1-} == -d ]]; then
        COMPREPLY=($(compgen -d -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

# The values of KEY in what `instant-upload ARGS... --json` lists (account names, rule
# names, item numbers), one per line.
_instant_upload_values() {
    local key=$1
    shift
    "${words[0]}" "$@" --json 2>/dev/null |
        sed -n -e "s/^    \"$key\" : \"\(.*\)\",\{0,1\}\$/\1/p" -e "s/^    \"$key\" : \([0-9][0-9]*\),\{0,1\}\$/\1/p"
}

# Item numbers in the STATEs given.
_instant_upload_items() {
    local state
    for state in "$@"; do _instant_upload_values id queue --state "$state"; done
}

_instant_upload() {
    local cur prev words cword
    _instant_upload_init || return

    local commands="upload download queue status show retry pause resume cancel clear account watch run stop tray service help version"
    if [[ $cword -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    local command=${words[1]}
    case $prev in
        --account | -a)
            local IFS=$'\n'
            COMPREPLY=($(compgen -W "$(_instant_upload_values name account list)" -- "$cur"))
            return
            ;;
        --to | -t | --webdav | --tus | --user | -u | --name | --settle) return ;;
        --subfolders)
            COMPREPLY=($(compgen -W "none year month day" -- "$cur"))
            return
            ;;
        --after-upload)
            COMPREPLY=($(compgen -W "keep trash" -- "$cur"))
            return
            ;;
        --ca-file)
            _instant_upload_files
            return
            ;;
        --state | -s)
            COMPREPLY=($(compgen -W "queued in_progress retrying completed failed" -- "$cur"))
            return
            ;;
    esac
    case $command in
        upload)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--account --to --now --help" -- "$cur"))
            else
                _instant_upload_files
            fi
            ;;
        download) COMPREPLY=($(compgen -W "--account --no-track --help" -- "$cur")) ;;
        queue) COMPREPLY=($(compgen -W "--state --json --follow --help" -- "$cur")) ;;
        status) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
        show) _instant_upload_words "--json --help" in_progress retrying failed queued ;;
        retry) _instant_upload_words "--to --now --all-failed --help" failed ;;
        pause) _instant_upload_words "--all --help" in_progress retrying queued ;;
        resume) _instant_upload_words "--all --help" queued in_progress retrying ;;
        cancel) _instant_upload_words "--help" in_progress retrying failed queued ;;
        run) COMPREPLY=($(compgen -W "--until-idle --help" -- "$cur")) ;;
        clear) COMPREPLY=($(compgen -W "completed failed all" -- "$cur")) ;;
        account)
            if [[ $cword -eq 2 ]]; then
                COMPREPLY=($(compgen -W "add list remove" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "--webdav --tus --user --login --name --password-stdin --wifi-only --ca-file --allow-insecure-http --json --help" -- "$cur"))
            fi
            ;;
        watch)
            if [[ $cword -eq 2 ]]; then
                COMPREPLY=($(compgen -W "add list remove pause resume" -- "$cur"))
            elif [[ ${words[2]} == add && $cur != -* ]]; then
                _instant_upload_files -d
            elif [[ $cword -eq 3 && ${words[2]} =~ ^(pause|resume|remove)$ && $cur != -* ]]; then
                local IFS=$'\n'
                COMPREPLY=($(compgen -W "$(_instant_upload_values id watch list)" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "--to --account --name --pictures --videos --existing --subfolders --after-upload --wifi-only --on-ac-power --settle --json --help" -- "$cur"))
            fi
            ;;
        service) [[ $cword -eq 2 ]] && COMPREPLY=($(compgen -W "install uninstall status" -- "$cur")) ;;
    esac
}

# The options given (after a -), else the numbers of the items in the STATEs given.
_instant_upload_words() {
    local options=$1
    shift
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(_instant_upload_items "$@")" -- "$cur"))
    fi
}

complete -F _instant_upload instant-upload
