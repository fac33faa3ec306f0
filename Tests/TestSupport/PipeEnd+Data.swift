import Foundation
import Platform

/// A child's pipe read the way tests read Foundation's pipes.
extension PipeEnd {
    /// What one read gives (waiting for it); empty at the end.
    public var availableData: Data { Data(readAvailable()) }

    /// Everything until the child closes its end.
    public func readDataToEndOfFile() -> Data { Data(readToEnd()) }
}
