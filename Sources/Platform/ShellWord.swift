/// Text as one word for a POSIX shell, for commands the program tells a person to run
/// (`chmod 600 '/home/ann/My Config/credentials'`): pasted into a terminal, it means
/// exactly the path it names.
public enum ShellWord {
    /// `text` as it is when that is one plain word, else in single quotes (a `'` inside
    /// becomes `'\''`).
    public static func quote(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "/", ".", "_", "-", "+", "@", "%", "=", ":", ",": true
            default: false
            }
        }
        if plain { return text }
        return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
