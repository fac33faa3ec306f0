@testable import CLI
import Queue
import Testing

@Suite("Words in printed text")
struct TextWordsTests {
    @Test("the word ID becomes the row's number, and only the word, in ASCII and other text alike",
          arguments: [
              ("`instant-upload retry ID`", "`instant-upload retry 42`"),
              ("ID first, last ID", "42 first, last 42"),
              ("IDs VALID ID_x x_ID ID9 IDID", "IDs VALID ID_x x_ID ID9 IDID"),
              ("(ID) [ID]", "(42) [42]"),
              ("no id here", "no id here"),
              ("réessayez avec ID", "réessayez avec 42"),
              ("éID IDé", "éID IDé"),
              ("ID… «ID»", "42… «42»"),
              ("ID\u{301} x", "ID\u{301} x"),
          ])
    func substitutesID(text: String, expected: String) {
        #expect(Transfer.substituteID(in: text, id: 42) == expected)
    }

    @Test("lines wrap at the width in characters, whether the text is ASCII or not",
          arguments: [
              ("aaa bbb ccc", "> aaa bbb\n  ccc"),
              ("ééé bbb ccc", "> ééé bbb\n  ccc"),
              ("aaa\nbbb ccc ddd", "> aaa\n  bbb ccc\n  ddd"),
              ("aaaaaaaaaaaa b", "> aaaaaaaaaaaa\n  b"),
          ])
    func wraps(text: String, expected: String) {
        #expect(TextLayout.wrap(text, width: 9, indent: "  ", firstIndent: "> ") == expected)
    }

    @Test("a character is counted once, however many bytes it takes")
    func lengths() {
        #expect(TextLayout.length("IMG_0001.jpg") == 12)
        #expect(TextLayout.length("Été 2026.jpg") == 12)
        #expect(TextLayout.length("a\r\nb") == 3)
    }
}
