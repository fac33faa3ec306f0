import CLI
import Glibc

exit(Main.instantUpload(Argument.commandLine()))
