#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One usable manifest line.
public struct ManifestEntry: Sendable, Equatable {
    public var url: String
    /// The cache key: `key=` when given, else the URL exactly as written.
    public var key: String
    /// nil when the line named none (the run's default applies).
    public var priority: RequestPriority?
    public var source: ManifestSource
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

    public struct OpenError: Error, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "\(path): \(reason)" }
    }

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
            if fd < 0 { throw OpenError(path: path, reason: "cannot open manifest: \(errnoString(errno))") }
            var st = stat()
            if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                close(fd)
                throw OpenError(path: path, reason: "is a directory, not a manifest")
            }
        }
        defer { if fd != STDIN_FILENO { close(fd) } }

        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var line = [UInt8]()
        line.reserveCapacity(1024)
        var lineNumber = 1
        var overlong = false
        var atStart = true

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
            switch parse(line: line, source: source) {
            case .none: break
            case .entry(let e): try entry(e)
            case .problem(let p): try problem(p)
            }
        }

        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw OpenError(path: path, reason: "read error: \(errnoString(errno))")
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

    func parse(line bytes: [UInt8], source: ManifestSource) -> Parsed {
        func problem(_ reason: String) -> Parsed { .problem(ManifestProblem(source: source, reason: reason)) }
        if bytes.contains(0) { return problem("NUL byte in line (binary data?)") }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return problem("line is not valid UTF-8")
        }
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return .none }

        var url: String
        var key: String?
        var priority: RequestPriority?
        if trimmed.hasPrefix("{") {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8))) as? [String: Any] else {
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
                return problem("unknown field \"\(name)\" (expected url, priority, key)")
            }
        } else {
            let fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
            url = String(fields[0])
            for field in fields.dropFirst() {
                guard let eq = field.firstIndex(of: "=") else {
                    return problem("unexpected text '\(Self.clip(String(field)))' after the URL (fields are name=value)")
                }
                let name = field[..<eq]
                let value = String(field[field.index(after: eq)...])
                switch name {
                case "priority":
                    guard let p = RequestPriority(name: value) else {
                        return problem("priority must be high, normal or low, not '\(Self.clip(value))'")
                    }
                    priority = p
                case "key":
                    guard !value.isEmpty else { return problem("empty key=") }
                    key = value
                default:
                    return problem("unknown field '\(Self.clip(String(name)))' (expected priority= or key=)")
                }
            }
        }
        if let reason = Self.urlProblem(url) {
            return problem("\(reason): \(Self.clip(Redaction.url(url)))")
        }
        let defaultKey = options.stripQueryFromKeys ? Self.strippingQuery(url) : url
        return .entry(ManifestEntry(url: url, key: key ?? defaultKey, priority: priority, source: source))
    }

    /// Why a string is not a URL imgwarm fetches, or nil.
    public static func urlProblem(_ url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return "not a URL" }
        let scheme = url[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else {
            if scheme.isEmpty || !scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) {
                return "not a URL"
            }
            return "unsupported scheme '\(clip(scheme))' (only http and https)"
        }
        let rest = url[url.index(after: colon)...]
        guard rest.hasPrefix("//") else { return "not a URL (expected \(scheme)://host/...)" }
        let afterSlashes = rest.dropFirst(2)
        let authority = afterSlashes.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        if host.isEmpty || host.hasPrefix(":") { return "URL has no host" }
        for u in url.unicodeScalars where u.value <= 0x20 || u.value == 0x7F {
            return "URL contains a space or control character"
        }
        return nil
    }

    /// The URL without `?query` and `#fragment`.
    public static func strippingQuery(_ url: String) -> String {
        guard let i = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<i])
    }

    static func clip(_ s: String, _ max: Int = 80) -> String {
        s.count <= max ? s : String(s.prefix(max)) + "…"
    }
}
