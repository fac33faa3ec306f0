// The config file: any text gives a Configuration within its limits or an error naming a line.
@testable import Engine
@testable import Platform

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    if let ini = try? IniFile(parsing: text) {
        for section in ini.sections { precondition(section.values.keys.allSatisfy { !$0.isEmpty }) }
    }
    if let config = try? Configuration.parse(text) {
        precondition((1...32).contains(config.uploadSlots) && (1...32).contains(config.downloadSlots))
        precondition((1...1024).contains(config.chunkSizeMB) && (1...3600).contains(config.stallSeconds))
        _ = config.transferSettings
    }
    return 0
}
