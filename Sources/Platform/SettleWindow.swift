/// How long a file must stay untouched (same size, same modification time, nobody writing)
/// before it is taken: by a watch rule (unless the rule sets its own `settle_seconds`), by
/// Local Drive's watch of edited downloads, and by an upload whose file changed under it.
/// One setting, so a file that one part calls still is still for the others too.
public enum SettleWindow {
    public static let seconds = 3
}
