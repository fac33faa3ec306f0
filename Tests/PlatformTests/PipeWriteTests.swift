import Glibc
import Platform
import Testing

/// A command is not the agent: SIGPIPE keeps its default there, which would end it with no
/// word said. Writing to a child that is gone must fail as a write, not as the process.
@Suite("Writing to a pipe whose reader is gone")
struct PipeWriteTests {
    @Test("the write says the other end is gone; no SIGPIPE ends the process or is left pending")
    func readerGone() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        let writer = PipeEnd(fileDescriptor: ends[1])
        #expect(writer.write(Array("a password\n".utf8)) == false)
        var pending = sigset_t()
        sigpending(&pending)
        #expect(sigismember(&pending, SIGPIPE) == 0, "the signal the write queued was taken back")
    }

    @Test("input for a child that exits without reading it: the child's run is reported, the caller lives on")
    func childIgnoresInput() throws {
        // Big enough not to fit the pipe's buffer, so the write meets the closed end.
        let output = try #require(try ChildProcess.run("/bin/true", [], input: String(repeating: "x", count: 1 << 20)))
        #expect(output.status == 0)
    }
}
