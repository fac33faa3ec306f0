# bash completion for instant-upload                              -*- shell-script -*-

_instant_upload() {
    local cur prev words cword
    _init_completion || return

    local commands="upload download queue status show retry pause resume cancel clear account watch run service help version"
    if [[ $cword -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    local command=${words[1]}
    case $prev in
        --to | -t | --account | -a | --webdav | --tus | --user | -u | --name | --settle) return ;;
        --subfolders)
            COMPREPLY=($(compgen -W "none year month day" -- "$cur"))
            return
            ;;
        --after-upload)
            COMPREPLY=($(compgen -W "keep trash" -- "$cur"))
            return
            ;;
        --ca-file)
            _filedir
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
                _filedir
            fi
            ;;
        download) COMPREPLY=($(compgen -W "--account --no-track --help" -- "$cur")) ;;
        queue) COMPREPLY=($(compgen -W "--state --json --follow --help" -- "$cur")) ;;
        status | show) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
        retry) COMPREPLY=($(compgen -W "--to --now --all-failed --help" -- "$cur")) ;;
        pause | resume) COMPREPLY=($(compgen -W "--all --help" -- "$cur")) ;;
        cancel) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
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
                _filedir -d
            else
                COMPREPLY=($(compgen -W "--to --account --name --pictures --videos --existing --subfolders --after-upload --wifi-only --on-ac-power --settle --json --help" -- "$cur"))
            fi
            ;;
        service) [[ $cword -eq 2 ]] && COMPREPLY=($(compgen -W "install uninstall status" -- "$cur")) ;;
    esac
} &&
    complete -F _instant_upload instant-upload
