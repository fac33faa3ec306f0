# bash completion for share-to                                    -*- shell-script -*-
#
# Loaded by itself where the bash-completion package is installed; without it, source this
# file from ~/.bashrc.

_share_to() {
    local cur prev
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    case $prev in
        --account | -a)
            local IFS=$'\n'
            COMPREPLY=($(compgen -W "$(instant-upload account list --json 2>/dev/null | sed -n 's/^    "name" : "\([^"]*\)",\{0,1\}$/\1/p')" -- "$cur"))
            return
            ;;
        --to | -t) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--account --to --version --help" -- "$cur"))
    elif declare -F _filedir >/dev/null; then
        _filedir
    else
        local IFS=$'\n'
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

complete -F _share_to share-to
