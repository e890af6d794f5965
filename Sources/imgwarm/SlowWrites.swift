#if canImport(Glibc)
import Glibc
#endif
import ImgWarmKit

/// Fault injection for the kill tests (ReliabilityTests/CrashSafetyTests):
/// with `IMGWARM_TEST_SLOW_WRITES=MICROSECONDS`, every store copies its
/// bytes in 4 KiB pieces with a pause before each, so that a SIGKILL often
/// lands while a file is half written. Chosen once, here, as the cache's
/// `FileWriter`; the engine's store calls take no hook.
enum SlowWrites {
    static func writer(_ environment: [String: String]) -> FileWriter {
        guard let v = environment["IMGWARM_TEST_SLOW_WRITES"], let n = UInt32(v), n > 0 else { return .direct }
        let pause = useconds_t(min(n, 1_000_000))
        return FileWriter { fd, raw in
            var offset = 0
            while offset < raw.count {
                usleep(pause)
                let count = min(4096, raw.count - offset)
                let e = FileWriter.direct.write(fd, UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + count)]))
                if e != 0 { return e }
                offset += count
            }
            return 0
        }
    }
}
