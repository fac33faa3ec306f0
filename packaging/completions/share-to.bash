# bash completion for share-to                                    -*- shell-script -*-

_share_to() {
    local cur prev words cword
    _init_completion || return
    case $prev in
        --to | -t | --account | -a) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--account --to --version --help" -- "$cur"))
    else
        _filedir
    fi
} &&
    complete -F _share_to share-to
