#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImgWarmSupport
import ImgWarmDownload
import ImgWarmCache

/// One usable manifest line.
public struct ManifestEntry: Sendable, Equatable {
    /// The URL as the app has it (`ParsedURL.absolute`): what is requested.
    public var url: String
    /// The cache key: `key=` when given (verbatim), else `url`.
    public var key: String
    /// nil when the line named none (the run's default applies).
    public var priority: RequestPriority?
    public var source: ManifestSource
    /// Whether `url` differs from the manifest text (`ParsedURL.reencoded`).
    public var reencoded = false
    /// `ParsedURL.hostKey`, when known.
    public var hostKey: String?
}

/// `FILE:LINE` of a manifest line.
public struct ManifestSource: Sendable, Equatable, CustomStringConvertible {
    public var fileIndex: Int
    public var line: Int
    public var description: String { "#\(fileIndex):\(line)" }
}

/// A line that could not be used, with a one-line reason.
public struct ManifestProblem: Sendable, Equatable {
    public var source: ManifestSource
    public var reason: String
}

/// How manifest keys are derived.
public struct ManifestOptions: Sendable {
    /// `--key-strip-query`: default keys without query and fragment.
    public var stripQueryFromKeys = false
    /// A layout whose key is the URL itself (`CacheLayout.manifestKeyRule`).
    public var urlKeys: ManifestKeyRule?
    public init() {}
}

/// Reads manifests as a stream of lines (files or standard input, UTF-8,
/// LF or CRLF, optional BOM): `URL [priority=..] [key=..]` or a JSON object
/// per line. Memory stays independent of the file size: one chunk and one
/// line at a time.
public struct ManifestReader {
    /// Lines longer than this are refused (a URL is never that long; a
    /// binary file fed by mistake often has no newline at all).
    public static let maxLineBytes = 65535

    public let options: ManifestOptions
    public init(options: ManifestOptions = ManifestOptions()) { self.options = options }

    /// Reads one manifest (`-` for standard input), calling `entry` or
    /// `problem` for each non-blank, non-comment line.
    public func read(path: String, fileIndex: Int,
                     entry: (ManifestEntry) throws -> Void,
                     problem: (ManifestProblem) throws -> Void) throws {
        let fd: Int32
        if path == "-" {
            fd = STDIN_FILENO
        } else {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd < 0 { throw ImgWarmError.manifest(path: path, reason: "cannot open manifest: \(errnoString(errno))") }
            var st = stat()
            if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                close(fd)
                throw ImgWarmError.manifest(path: path, reason: "is a directory, not a manifest")
            }
        }
        defer { if fd != STDIN_FILENO { close(fd) } }

        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var line = [UInt8]()
        line.reserveCapacity(1024)
        var lineNumber = 1
        var overlong = false
        var atStart = true
        /// The host key of the last entry, handed to the next line's parse.
        var lastHostKey: String?

        func finishLine() throws {
            defer {
                line.removeAll(keepingCapacity: true)
                overlong = false
                lineNumber += 1
            }
            let source = ManifestSource(fileIndex: fileIndex, line: lineNumber)
            if overlong {
                try problem(ManifestProblem(source: source, reason: "line longer than \(Self.maxLineBytes) bytes"))
                return
            }
            if atStart {
                atStart = false
                if line.count >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF { line.removeFirst(3) }
            }
            if line.last == 0x0D { line.removeLast() }
            switch parse(line: line, source: source, previousHostKey: lastHostKey) {
            case .none: break
            case .entry(let e):
                lastHostKey = e.hostKey
                try entry(e)
            case .problem(let p): try problem(p)
            }
        }

        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ImgWarmError.manifest(path: path, reason: "read error: \(errnoString(errno))")
            }
            if n == 0 { break }
            var start = 0
            while start < n {
                if let nl = buffer[start..<n].firstIndex(of: 0x0A) {
                    if !overlong { line.append(contentsOf: buffer[start..<nl]) }
                    if line.count > Self.maxLineBytes { overlong = true }
                    try finishLine()
                    start = nl + 1
                } else {
                    if !overlong { line.append(contentsOf: buffer[start..<n]) }
                    if line.count > Self.maxLineBytes {
                        overlong = true
                        line.removeAll(keepingCapacity: true)
                    }
                    start = n
                }
            }
        }
        if !line.isEmpty || overlong { try finishLine() }
    }

    enum Parsed {
        case none
        case entry(ManifestEntry)
        case problem(ManifestProblem)
    }

    /// Whitespace between fields and around a line (ASCII: manifests are
    /// machine-written, and this keeps the per-line cost at byte speed).
    @inline(__always) static func isBlank(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0B || c == 0x0C
    }

    /// One line; `previousHostKey` as in `ParsedURL.parse`.
    func parse(line bytes: [UInt8], source: ManifestSource, previousHostKey: String? = nil) -> Parsed {
        // Scanned in place: no bounds check on each byte in a release build.
        bytes.withUnsafeBufferPointer { parse(line: $0, source: source, previousHostKey: previousHostKey) }
    }

    private func parse(line bytes: UnsafeBufferPointer<UInt8>, source: ManifestSource, previousHostKey: String?) -> Parsed {
        func problem(_ reason: String) -> Parsed { .problem(ManifestProblem(source: source, reason: reason)) }
        var lo = 0, hi = bytes.count
        while lo < hi && Self.isBlank(bytes[lo]) { lo += 1 }
        while hi > lo && Self.isBlank(bytes[hi - 1]) { hi -= 1 }
        if lo == hi || bytes[lo] == UInt8(ascii: "#") { return .none }
        let line = bytes[lo..<hi]
        var ascii = true
        for c in line {
            if c == 0 { return problem("NUL byte in line (binary data?)") }
            if c >= 0x80 { ascii = false }
        }
        if !ascii && String(validating: line, as: UTF8.self) == nil {
            return problem("line is not valid UTF-8")
        }

        var url: String
        var key: String?
        var priority: RequestPriority?
        // A JSON array (or a line of one written out over several lines):
        // the most common wrong guess at the format.
        if let first = line.first, first == UInt8(ascii: "[") || first == UInt8(ascii: "]") || first == UInt8(ascii: "\"") {
            return problem("looks like a JSON array: a manifest holds one URL or one JSON object ({\"url\": ...}) per line")
        }
        if line.first == UInt8(ascii: "{") {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
                return problem("invalid JSON object")
            }
            guard let u = object["url"] as? String else { return problem("JSON line has no \"url\" string") }
            url = u
            if let k = object["key"] {
                guard let k = k as? String, !k.isEmpty else { return problem("\"key\" must be a non-empty string") }
                key = k
            }
            if let p = object["priority"] {
                guard let p = p as? String, let parsed = RequestPriority(name: p) else {
                    return problem("priority must be high, normal or low")
                }
                priority = parsed
            }
            for name in object.keys where !["url", "key", "priority"].contains(name) {
                return problem("unknown field \(Redaction.manifestWord(name)) (expected url, priority, key)")
            }
        } else {
            // Fields are read in place, one after another (an array of
            // them cost about 600 instructions a line). The line is
            // trimmed: the URL starts it.
            var i = line.startIndex
            while i < line.endIndex && !Self.isBlank(line[i]) { i += 1 }
            url = String(decoding: line[line.startIndex..<i], as: UTF8.self)
            while i < line.endIndex {
                while i < line.endIndex && Self.isBlank(line[i]) { i += 1 }
                let start = i
                while i < line.endIndex && !Self.isBlank(line[i]) { i += 1 }
                guard start < i else { continue }
                let field = line[start..<i]
                guard let eq = field.firstIndex(of: UInt8(ascii: "=")) else {
                    return problem("unexpected text \(Redaction.manifestWord(String(decoding: field, as: UTF8.self))) after the URL (fields are name=value)")
                }
                let name = String(decoding: field[..<eq], as: UTF8.self)
                let value = String(decoding: field[(eq + 1)...], as: UTF8.self)
                switch name {
                case "priority":
                    guard let p = RequestPriority(name: value) else {
                        return problem("priority must be high, normal or low, not \(Redaction.manifestWord(value))")
                    }
                    priority = p
                case "key":
                    guard !value.isEmpty else { return problem("empty key=") }
                    key = value
                default:
                    return problem("unknown field \(Redaction.manifestWord(name)) (expected priority= or key=)")
                }
            }
        }
        switch ParsedURL.parse(url, previousHostKey: previousHostKey) {
        case .failure(let p):
            return problem("\(p.reason): \(TerminalText.clip(Redaction.url(url)))")
        case .success(let parsed):
            if let rule = options.urlKeys {
                if key != nil { return problem("key= has no meaning under --layout \(rule.layout): \(rule.why)") }
                if parsed.hasCredentials {
                    return problem("a URL with user:password@ is refused under --layout \(rule.layout): its cache entry would hold the credentials: \(TerminalText.clip(parsed.redacted))")
                }
            }
            return .entry(Self.entry(parsed, key: key, priority: priority, source: source, options: options))
        }
    }

    /// The entry of a parsed URL: the key is `key=` verbatim when given,
    /// else the app's URL (without query and fragment under
    /// `--key-strip-query`).
    static func entry(_ parsed: ParsedURL, key: String?, priority: RequestPriority?, source: ManifestSource,
                      options: ManifestOptions) -> ManifestEntry {
        let defaultKey = options.stripQueryFromKeys ? parsed.absoluteWithoutQuery : parsed.absolute
        if let rule = options.urlKeys {
            // The library keys the URL as the app wrote it, not as
            // Foundation re-encodes it (`[1]` and `%zz` stay in a query).
            return ManifestEntry(url: parsed.absolute, key: rule.key(parsed.text), priority: priority, source: source,
                                 reencoded: parsed.reencoded, hostKey: parsed.hostKey)
        }
        return ManifestEntry(url: parsed.absolute, key: key ?? defaultKey, priority: priority, source: source,
                             reencoded: parsed.reencoded, hostKey: parsed.hostKey)
    }
}
