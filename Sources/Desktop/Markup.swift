/// Text shown where markup is read (a notification server with `body-markup`, zenity's
/// `--text`, both Pango-like): `&`, `<` and `>` escaped, so a file named `a&b<1>.jpg` or a
/// folder named `a&b` shows as itself.
enum Markup {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(c)
            }
        }
        return out
    }
}
