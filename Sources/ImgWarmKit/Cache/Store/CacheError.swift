#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error about the cache folder itself: exit status 3.
public struct CacheError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let reason: String
    public let errno: Int32
    public init(path: String, reason: String, errno: Int32 = 0) {
        self.path = path
        self.reason = reason
        self.errno = errno
    }
    public var isDiskFull: Bool { errno == ENOSPC || errno == EDQUOT }
    public var description: String { "\(path): \(reason)" }
}

func errnoString(_ e: Int32) -> String { String(cString: strerror(e)) }
