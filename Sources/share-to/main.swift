import CLI
import Glibc

exit(Main.shareTo(Argument.commandLine()))
