import CLI
import Glibc
import Platform

Signals.unblockAll()
Main.exit(Main.shareTo(Argument.commandLine()))
