import CLI
import Glibc
import Platform

Signals.unblockAll()
exit(Main.instantUpload(Argument.commandLine()))
