// The XML reader on its own: whatever the bytes, an error or events whose tags pair up
// within the depth bound; and what it accepts, written out again, reads back the same.
// Fed in pieces, looking ahead as far as its longest event read whole, it reads the same
// events, and it refuses what it refuses whole.
@testable import Transport

private let maximumDepth = 16

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let piece = 1 + Int(bytes.first ?? 0) % 7
    guard let (events, longest) = read(bytes) else {
        precondition(fed(bytes, piece: piece, lookahead: 8) == nil, "refused whole, read fed")
        return 0
    }
    precondition(fed(bytes, piece: piece, lookahead: longest) == events, "read fed differently")
    let written = write(events)
    guard let (again, _) = read(Array(written.utf8)) else { preconditionFailure("refused its own writing: \(written)") }
    precondition(again == events, "read back differently: \(written)")
    return 0
}

/// The events of a document the reader accepts, checked as they come, and the most bytes one
/// of them took; nil when it refuses it.
private func read(_ bytes: [UInt8]) -> ([XMLEvent], Int)? {
    guard var reader = try? XMLReader(bytes, maximumDepth: maximumDepth) else { return nil }
    var events: [XMLEvent] = []
    var longest = 1, last = 0
    var open: [XMLName] = []
    while true {
        let event: XMLEvent?
        do {
            event = try reader.next()
        } catch {
            // An error is final.
            precondition((try? reader.next()) == nil)
            return nil
        }
        guard let event else {
            precondition(open.isEmpty && events.contains { if case .start = $0 { true } else { false } })
            precondition((try? reader.next()) == nil)
            return (events, longest)
        }
        longest = max(longest, reader.offset - last)
        last = reader.offset
        switch event {
        case .start(let name, _):
            open.append(name)
            precondition(open.count <= maximumDepth)
        case .end(let name):
            let opened = open.popLast()
            precondition(opened == name && opened?.prefix == name.prefix)
        case .text(let text):
            precondition(!open.isEmpty && !text.isEmpty)
            if case .text = events.last { preconditionFailure("two text events in a row") }
        case .processingInstruction:
            break
        }
        events.append(event)
    }
}

/// The events of the document fed in pieces of `piece` bytes, read after each; nil when refused.
private func fed(_ bytes: [UInt8], piece: Int, lookahead: Int) -> [XMLEvent]? {
    var reader = XMLReader(lookahead: lookahead, maximumDepth: maximumDepth)
    var events: [XMLEvent] = []
    do {
        for start in stride(from: 0, to: bytes.count, by: piece) {
            bytes[start..<min(start + piece, bytes.count)].withUnsafeBytes { reader.feed($0) }
            while let event = try reader.next() { events.append(event) }
        }
        reader.finish()
        while let event = try reader.next() { events.append(event) }
    } catch {
        return nil
    }
    return events
}

/// The events as a document of their own, every namespace declared where it is used.
private func write(_ events: [XMLEvent]) -> String {
    var out = ""
    var names: [String] = []
    for event in events {
        switch event {
        case .start(let name, let attributes):
            var declarations = ""
            let tag: String
            if name.namespace == XMLNamespaces.xml {
                tag = "xml:" + name.localName
            } else if name.namespace.isEmpty {
                tag = name.localName; declarations += #" xmlns="""#
            } else {
                tag = "e:" + name.localName; declarations += #" xmlns:e=""# + escape(name.namespace, attribute: true) + "\""
            }
            out += "<" + tag + declarations
            for (index, attribute) in attributes.enumerated() {
                let name = attribute.name, value = "=\"" + escape(attribute.value, attribute: true) + "\""
                if name.namespace.isEmpty {
                    out += " " + name.localName + value
                } else if name.namespace == XMLNamespaces.xml {
                    out += " xml:" + name.localName + value
                } else {
                    out += " a\(index):" + name.localName + value + " xmlns:a\(index)=\"" + escape(name.namespace, attribute: true) + "\""
                }
            }
            out += ">"
            names.append(tag)
        case .end:
            out += "</" + (names.popLast() ?? "") + ">"
        case .text(let text):
            out += escape(text, attribute: false)
        case .processingInstruction(let target, let data):
            out += "<?" + target + (data.isEmpty ? "" : " " + data) + "?>"
        }
    }
    return out
}

private func escape(_ text: String, attribute: Bool) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "\r": out += "&#13;"
        case "\t" where attribute: out += "&#9;"
        case "\n" where attribute: out += "&#10;"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}
