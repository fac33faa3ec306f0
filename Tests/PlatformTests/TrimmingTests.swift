import Foundation
import Platform
import Testing

@Suite("Trimming text at its ends")
struct TrimmingTests {
    static let samples = [
        "", " ", "\t", "plain", "  both ends  ", "\tTab\t", " \n line break kept \n ", "\r\n crlf \r\n",
        "\u{00A0}no-break space\u{2003}", "\u{2028}line separator\u{2029}", "\u{0085}next line\u{000B}\u{000C}",
        "inner  spaces stay", "\u{200B}zero width space\u{200B}", "e\u{0301} ", " 👍🏽 ", "\u{180E}mongolian vowel separator\u{1680}", "\u{FEFF}byte order mark\u{205F}",
    ]

    @Test("trimmingBlanks drops what Foundation's .whitespaces does, and nothing else")
    func blanks() {
        for text in Self.samples {
            #expect(text.trimmingBlanks() == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
        }
    }

    @Test("trimmingWhitespace drops what Foundation's .whitespacesAndNewlines does, and nothing else")
    func whitespace() {
        for text in Self.samples {
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.debugDescription)")
        }
    }

    @Test("isBlank and isWhitespaceOrNewline are Foundation's sets, for every scalar of the basic plane")
    func everyScalar() {
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            #expect(scalar.isBlank == CharacterSet.whitespaces.contains(scalar), "U+\(String(value, radix: 16))")
            #expect(scalar.isWhitespaceOrNewline == CharacterSet.whitespacesAndNewlines.contains(scalar), "U+\(String(value, radix: 16))")
        }
    }

    @Test("isAlphanumeric is Foundation's .alphanumerics, scalar by scalar")
    func alphanumerics() {
        for scalar in "aZ09_-. é߀٣Ⅻ½\u{0301}漢".unicodeScalars {
            #expect(scalar.isAlphanumeric == CharacterSet.alphanumerics.contains(scalar), "\(scalar.debugDescription)")
        }
    }
}
