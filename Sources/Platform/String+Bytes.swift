import Glibc

extension String {
    /// Whether every byte of the text's UTF-8 passes `test`. Read from the string's own
    /// storage where it has one (any string this program made): a plain loop, several
    /// times quicker than walking `utf8`, for checks a view makes on every name it prints.
    @inlinable public func everyUTF8Byte(_ test: (UInt8) -> Bool) -> Bool {
        utf8.withContiguousStorageIfAvailable { $0.allSatisfy(test) } ?? utf8.allSatisfy(test)
    }

    /// Whether the text's UTF-8 holds `byte` (a newline, say), found as `everyUTF8Byte` reads.
    @inlinable public func containsUTF8Byte(_ byte: UInt8) -> Bool {
        utf8.withContiguousStorageIfAvailable { bytes in
            guard let start = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(start, Int32(byte), bytes.count) != nil
        } ?? utf8.contains(byte)
    }
}
