import CLI
import Glibc
import Platform

Signals.unblockAll()
// One program under two names: installed as `share-to` too (a link to this one), it is the
// file managers' "Send to" handler.
let invokedAs = CommandLine.arguments.first?.split(separator: "/").last ?? ""
Main.exit(invokedAs == "share-to" ? Main.shareTo(Argument.commandLine()) : Main.instantUpload(Argument.commandLine()))
