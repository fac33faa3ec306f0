import CExif

/// Reads the capture date from EXIF data (a TIFF structure) through libexif (loaded on first
/// use: Sources/CExif).
///
/// libexif is handed a private copy behind an "Exif\0\0" header, at most 64 KiB (it reads
/// no further anyway), with the "follow the specification" option off so it never fills
/// in missing tags (it would invent today's date).
enum ExifDateReader {
    enum Outcome: Equatable {
        case found(CalendarFields, utcOffsetSeconds: Int?)
        /// Nothing usable; the reason is for the log.
        case missing(String)
    }

    private static let limit = 0xFFFE

    static func captureDate(tiff: [UInt8]) -> Outcome {
        guard tiff.count >= 8 else { return .missing("the EXIF data is cut short") }
        var payload = Array("Exif".utf8) + [0, 0] + tiff.prefix(limit)
        normaliseMagic(&payload, at: 6)
        if let failure = cexif_load() { return .missing(String(cString: failure)) }
        guard let data = cexif_data_new() else { return .missing("no memory to read the EXIF data") }
        defer { cexif_data_unref(data) }
        cexif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        payload.withUnsafeBufferPointer { cexif_data_load_data(data, $0.baseAddress, UInt32($0.count)) }

        let candidates: [(ExifIfd, ExifTag, ExifTag, String)] = [
            (EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_ORIGINAL, EXIF_TAG_OFFSET_TIME_ORIGINAL, "DateTimeOriginal"),
            (EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_DIGITIZED, EXIF_TAG_OFFSET_TIME_DIGITIZED, "DateTimeDigitized"),
            (EXIF_IFD_0, EXIF_TAG_DATE_TIME, EXIF_TAG_OFFSET_TIME, "DateTime"),
        ]
        var firstProblem: String?
        for (ifd, dateTag, offsetTag, name) in candidates {
            guard let text = ascii(data, ifd, dateTag) else { continue }
            guard let fields = parseDateTime(text) else {
                firstProblem = firstProblem ?? "EXIF \(name) `\(printable(text))` is not a date"
                continue
            }
            // The offset is in the EXIF IFD even when the date is the IFD0 DateTime.
            let offset = ascii(data, EXIF_IFD_EXIF, offsetTag).flatMap(parseOffset)
            return .found(fields, utcOffsetSeconds: offset)
        }
        return .missing(firstProblem ?? "the EXIF data has no DateTimeOriginal")
    }

    /// Olympus and Panasonic RAW files replace TIFF's 42 with a magic of their own; the
    /// IFDs are plain TIFF, so libexif reads them once the magic is the standard one.
    private static func normaliseMagic(_ bytes: inout [UInt8], at start: Int) {
        guard bytes.count >= start + 4 else { return }
        if bytes[start] == 0x49, bytes[start + 1] == 0x49 { bytes[start + 2] = 0x2A; bytes[start + 3] = 0 }
        if bytes[start] == 0x4D, bytes[start + 1] == 0x4D { bytes[start + 2] = 0; bytes[start + 3] = 0x2A }
    }

    /// An ASCII entry's text up to its first NUL; nil when absent or of another format.
    private static func ascii(_ data: UnsafeMutablePointer<ExifData>, _ ifd: ExifIfd, _ tag: ExifTag) -> [UInt8]? {
        guard let entry = cexif_entry(data, ifd, tag), entry.pointee.format == EXIF_FORMAT_ASCII,
              let raw = entry.pointee.data else { return nil }
        let bytes = UnsafeBufferPointer(start: raw, count: Int(entry.pointee.size))
        return Array(bytes.prefix { $0 != 0 }.prefix(64))
    }

    /// "YYYY:MM:DD HH:MM:SS" (some writers use `-` in the date or `T` between).
    static func parseDateTime(_ text: [UInt8]) -> CalendarFields? {
        guard text.count >= 19 else { return nil }
        func number(_ start: Int, _ length: Int) -> Int? {
            var value = 0
            for i in start..<(start + length) {
                let c = text[i]
                guard (0x30...0x39).contains(c) else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            return value
        }
        let dateSeparators: Set<UInt8> = [UInt8(ascii: ":"), UInt8(ascii: "-")]
        guard dateSeparators.contains(text[4]), dateSeparators.contains(text[7]),
              text[10] == UInt8(ascii: " ") || text[10] == UInt8(ascii: "T"),
              text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2) else { return nil }
        let fields = CalendarFields(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return fields.isPlausible ? fields : nil
    }

    /// "+02:00", "-05:30" to seconds east of UTC; nil for anything else (the EXIF "unknown"
    /// value is blanks).
    static func parseOffset(_ text: [UInt8]) -> Int? {
        guard text.count == 6, text[0] == UInt8(ascii: "+") || text[0] == UInt8(ascii: "-"), text[3] == UInt8(ascii: ":") else { return nil }
        let digits = [text[1], text[2], text[4], text[5]]
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let hours = Int(digits[0] - 0x30) * 10 + Int(digits[1] - 0x30)
        let minutes = Int(digits[2] - 0x30) * 10 + Int(digits[3] - 0x30)
        guard hours <= 18, minutes < 60 else { return nil }
        let seconds = hours * 3600 + minutes * 60
        return text[0] == UInt8(ascii: "-") ? -seconds : seconds
    }

    private static func printable(_ text: [UInt8]) -> String {
        String(decoding: text.map { (0x20..<0x7f).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
