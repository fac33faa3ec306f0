import Glibc

/// Watches the bytes of a body as they pass, e.g. to hash them or count progress.
/// Called on the transfer's own thread, in order, with every byte exactly once.
public protocol ByteObserver: AnyObject {
    func observe(_ bytes: UnsafeRawBufferPointer)
}

/// A `ByteObserver` of a resumed download's body that can be told to begin again: the
/// server answered the resume with the whole file, whose first byte comes next.
public protocol RestartableObserver: ByteObserver {
    /// What was observed so far (and whatever it stood for before the resume) no longer
    /// counts: the next byte is byte 0 of the file. Called on the transfer's own thread.
    func startOver()
}
