import Glibc
import Platform
import Transport

// Micro-benchmarks for `make bench`: the running SHA-256 on large buffers, inline and
// pipelined (hashing on its own thread, as uploads do). Prints one JSON object.

func seconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Megabytes to hash (MiB), default 1 GiB.
let total = (Int(CommandLine.arguments.dropFirst().first ?? "") ?? 1024) * 1024 * 1024
let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 << 20, alignment: 64)
for i in 0..<block.count { block[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 13) }

@MainActor
func run(_ body: (UnsafeRawBufferPointer) -> Void, finish: () -> Void) -> Double {
    let start = seconds()
    var done = 0
    while done < total {
        body(UnsafeRawBufferPointer(block))
        done += block.count
    }
    finish()
    return Double(total) / (seconds() - start) / 1e6
}

let inline = RunningSHA256()
let inlineRate = run({ inline.update($0) }, finish: {})
let pipeline = PipelinedHasher(RunningSHA256())
let pipelineRate = run({ pipeline.observe($0) }, finish: { pipeline.drain() })
pipeline.stop()
// Save and restore the state between "chunks", as checkpoints do.
let saved = RunningSHA256(state: inline.state)!
precondition(saved.hexDigest == inline.hexDigest)

print("{\"sha256_inline_MBps\": \(Int(saturating: inlineRate)), \"sha256_pipelined_MBps\": \(Int(saturating: pipelineRate)), \"bytes\": \(total)}")
