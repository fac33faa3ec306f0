import Testing
@testable import Transport

@Suite("Numbers from a server are hostile until parsed")
struct ServerNumberTests {
    @Test("plain digits within Int64 are read, with spaces or tabs around them", arguments: [
        ("0", 0), ("7", 7), ("007", 7), ("1234567890", 1_234_567_890), (" 42", 42), ("42\t", 42), ("\t 42 \t", 42),
        ("9223372036854775807", Int64.max), ("0000000000000000000000000000009223372036854775807", Int64.max),
    ] as [(String, Int64)])
    func reads(text: String, expected: Int64) throws {
        #expect(ServerNumber.read(text) == .value(expected))
        #expect(try ServerNumber.parse(text, field: "X") == expected)
    }

    @Test("anything that is not plain digits is not a number, whatever Int64() or Double() would make of it", arguments: [
        "", " ", "\t", "-1", "-0", "+1", "+0", "1.0", "1.", ".5", "1e3", "1E3", "1e300", "inf", "Infinity", "-inf", "nan", "NaN",
        "0x10", "0b1", "0o7", "1_000", "1,000", "1 000", "4 2", "42a", "a42", "forty-two", "١٢٣", "１２", "²", "42\r", "42\n",
        "\n42", "42\0", "\u{00A0}42", "42\u{00A0}", "4\u{0301}2", "--1", "٣",
    ])
    func refuses(text: String) {
        #expect(ServerNumber.read(text) == .notANumber, "\(text.debugDescription)")
        #expect(ServerNumber.value(of: text) == nil)
        #expect(throws: ProtocolViolation.self) { try ServerNumber.parse(text, field: "Upload-Offset") }
    }

    @Test("digits beyond Int64 are too large, never wrapped or trapped on", arguments: [
        "9223372036854775808", "18446744073709551616", "99999999999999999999", String(repeating: "9", count: 10_000),
    ])
    func overflow(text: String) {
        #expect(ServerNumber.read(text) == .tooLarge)
        #expect(ServerNumber.value(of: text) == nil)
        #expect(throws: ProtocolViolation.self) { try ServerNumber.parse(text, field: "Content-Length") }
    }

    @Test("a number outside the range the caller says makes sense is a violation naming the range")
    func range() throws {
        #expect(try ServerNumber.parse("100", field: "Upload-Offset", in: 0...100) == 100)
        #expect(try ServerNumber.parse("5", field: "Upload-Offset", in: 5...10) == 5)
        let error = #expect(throws: ProtocolViolation.self) { try ServerNumber.parse("101", field: "Upload-Offset", in: 0...100) }
        #expect(error?.message.contains("Upload-Offset `101`") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("0 to 100") == true, "\(error?.message ?? "")")
        #expect(error?.said == "Upload-Offset: 101")
        #expect(throws: ProtocolViolation.self) { try ServerNumber.parse("4", field: "Upload-Offset", in: 5...10) }
    }

    @Test("the violation quotes the server, shortened, with control characters and bidi overrides escaped")
    func quotes() {
        let error = #expect(throws: ProtocolViolation.self) { try ServerNumber.parse("1e300", field: "Retry-After") }
        #expect(error?.message == "the server sent Retry-After `1e300`, which is not a whole number")
        #expect(ServerNumber.quoted("a\u{1b}[31mb\nc\u{202e}d") == "a\\x1b[31mb\\nc\\u{202e}d")
        let long = ServerNumber.quoted(String(repeating: "x", count: 10_000))
        #expect(long == String(repeating: "x", count: 40) + "…")
        // One "character" of ten thousand combining marks is cut by scalars, not kept whole.
        #expect(ServerNumber.quoted("a" + String(repeating: "\u{0301}", count: 10_000)).unicodeScalars.count <= 41)
    }

    @Test("an absent optional header is nil; a present wrong one is a violation")
    func optional() throws {
        #expect(try ServerNumber.parseOptional(nil, field: "Upload-Length") == nil)
        #expect(try ServerNumber.parseOptional("12", field: "Upload-Length") == 12)
        #expect(throws: ProtocolViolation.self) { try ServerNumber.parseOptional("", field: "Upload-Length") }
    }

    @Test("every single byte: only the ten ASCII digits are numbers")
    func everyByte() {
        for byte in UInt8.min...UInt8.max {
            let text = String(decoding: [byte], as: UTF8.self)
            let isDigit = (0x30...0x39).contains(byte)
            #expect((ServerNumber.value(of: text) != nil) == isDigit, "byte \(byte)")
        }
    }

    @Test("every Int64 boundary reads back exactly")
    func boundaries() {
        var value: Int64 = 1
        while true {
            for candidate in [value - 1, value, value &+ 1] where candidate >= 0 {
                #expect(ServerNumber.value(of: String(candidate)) == candidate)
            }
            let (next, overflow) = value.multipliedReportingOverflow(by: 10)
            if overflow { break }
            value = next
        }
        #expect(ServerNumber.value(of: String(Int64.max)) == Int64.max)
    }
}
