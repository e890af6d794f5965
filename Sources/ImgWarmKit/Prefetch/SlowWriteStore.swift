#if canImport(Glibc)
import Glibc
#endif

/// Fault injection for the kill tests (ReliabilityTests/CrashSafetyTests):
/// the real DiskCache store, with the copy into the temp file done in
/// 4 KiB pieces and a pause before each, so that a SIGKILL often lands
/// while a temp file is half written. Only the CLI's composition root
/// builds one, when `IMGWARM_TEST_SLOW_WRITES=MICROSECONDS` is set; the
/// production write path knows nothing of it.
public final class SlowWriteStore: CacheStore, @unchecked Sendable {
    public let cache: DiskCache
    public let pause: useconds_t

    public init(cache: DiskCache, pauseMicroseconds: UInt32) {
        self.cache = cache
        self.pause = min(pauseMicroseconds, 1_000_000)
    }

    /// The store the environment asks for: `cache` itself unless the test
    /// variable is set.
    public static func fromEnvironment(_ environment: [String: String], cache: DiskCache) -> CacheStore {
        guard let v = environment["IMGWARM_TEST_SLOW_WRITES"], let n = UInt32(v), n > 0 else { return cache }
        return SlowWriteStore(cache: cache, pauseMicroseconds: n)
    }

    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, replacing previous: String?,
                      likelyNew: Bool) throws {
        try store(bytes, as: name, replacing: previous, likelyNew: likelyNew, response: nil)
    }

    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, replacing previous: String?,
                      likelyNew: Bool, response: StoredResponse?) throws {
        _ = try cache.store(bytes, for: name, replacing: previous, likelyNew: likelyNew,
                            response: response) { [pause] fd, raw in
            var offset = 0
            while offset < raw.count {
                usleep(pause)
                let n = min(4096, raw.count - offset)
                let e = FileIO.writeAll(fd, UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + n)]))
                if e != 0 { return e }
                offset += n
            }
            return 0
        }
    }

    public func renew(_ name: CacheEntryName) -> Int64? { cache.renew(name) }
}
