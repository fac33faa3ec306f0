import CLI
import Glibc
import Platform

Signals.unblockAll()
exit(Main.shareTo(Argument.commandLine()))
