#if canImport(Glibc)
import Glibc
#endif

/// Writes a file through a buffered stream to `path.tmp-<pid>` and renames
/// it into place when done, so readers (CI, node_exporter) never see half a
/// report.
public final class AtomicFileWriter {
    public let path: String
    private let tempPath: String
    private var buffer: [UInt8] = []
    private let fd: Int32
    private var failed: Int32 = 0

    public init(path: String) throws {
        self.path = path
        tempPath = path + ".tmp-\(getpid())"
        fd = open(tempPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            throw CacheError(path: path, reason: "cannot write: \(errnoString(errno))", errno: errno)
        }
        buffer.reserveCapacity(1 << 16)
    }

    public func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    private func flush() {
        guard failed == 0 else {
            buffer.removeAll(keepingCapacity: true)
            return
        }
        failed = buffer.withUnsafeBytes { FileIO.writeAll(fd, $0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, closes and renames into place.
    public func commit() throws {
        flush()
        try FileIO.closeAndRename(fd, writeError: failed, temp: tempPath, final: path)
    }
}

enum JSON {
    /// A JSON string literal.
    static func string(_ s: String) -> String {
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7F || (u.value >= 0x2028 && u.value <= 0x2029) {
                    out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    static func optional(_ s: String?) -> String { s.map(string) ?? "null" }
}
