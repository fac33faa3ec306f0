# fish completion for share-to
complete -c share-to -F
complete -c share-to -s a -l account -x -d 'The account to use'
complete -c share-to -s t -l to -x -d 'The folder on the server'
complete -c share-to -s h -l help -d 'Show help'
complete -c share-to -l version -d 'Show the version'
