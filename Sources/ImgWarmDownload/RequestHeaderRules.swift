import Foundation
import ImgWarmSupport

/// Every rule about the extra request headers of a run, in one place: how
/// `--header` and `--header-for` are read and checked, and which host gets
/// which header. The command line and the download engine both ask it.
///
/// - `--header 'Name: value'` goes only to the origin (scheme, host and
///   port) of the entry's own URL, the host the manifest named. A redirect
///   to another origin drops it (libcurl's own redirects would have sent it
///   everywhere; imgwarm follows redirects itself, `RedirectRule`).
/// - `--header-for ORIGIN 'Name: value'` goes to that origin only (scheme,
///   host and port, as curl binds credentials since 7.83), on any request
///   of the run, redirected or not. ORIGIN is `https://HOST[:PORT]`,
///   `http://HOST[:PORT]`, or a bare `HOST[:PORT]`, which means https: a
///   header that may carry a credential never goes in cleartext unless the
///   user wrote `http://`. Without a port, the scheme's default port (443
///   or 80). A bare rule whose host an http request meets is reported
///   once (`schemeMismatches`): the header is not sent there. Host names
///   compare without case; IPv6 in brackets.
/// - Either value may be `@FILE`: the header lines of FILE, one a line
///   (curl's convention; CR LF accepted, blank lines skipped), so that the
///   values stay out of the argument list every local user can read in
///   /proc/PID/cmdline.
///
/// A header line is `Name: value`, the name without spaces, no line break
/// or NUL anywhere: anything else could inject another header. Messages
/// never quote a value.
public struct RequestHeaderRules: Sendable, Equatable {
    /// A header for one host.
    public struct Scoped: Sendable, Equatable {
        /// "https" or "http".
        public var scheme: String
        /// Lowercased; an IPv6 address keeps its brackets.
        public var host: String
        /// The port as written; nil: the scheme's default port.
        public var port: Int?
        /// Whether the argument named the scheme (a bare HOST means https).
        public var schemeWritten: Bool
        /// The argument as given (messages name the rule by it).
        public var argument: String
        public var line: String

        var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

        func matches(_ o: Origin) -> Bool { scheme == o.scheme && host == o.host && effectivePort == o.port }
    }

    /// `--header` lines: for the origin of the entry's URL.
    public var entryOriginLines: [String] = []
    /// `--header-for` lines.
    public var scoped: [Scoped] = []

    public init() {}

    /// Rules with these `--header` lines only.
    public init(lines: [String]) { entryOriginLines = lines }

    public var isEmpty: Bool { entryOriginLines.isEmpty && scoped.isEmpty }

    /// Reads a file's bytes (the command line reads files; tests pass
    /// their own).
    public typealias FileReader = (String) throws -> [UInt8]

    public static func readFile(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ImgWarmError.usage("cannot read header file \(path)")
        }
        return Array(data)
    }

    /// Adds a `--header` argument: one line, or `@FILE`.
    public mutating func addHeader(_ argument: String, readFile: FileReader = RequestHeaderRules.readFile) throws {
        entryOriginLines += try Self.lines(of: argument, option: "--header", readFile: readFile)
    }

    /// Adds a `--header-for HOST HEADER` pair; HEADER may be `@FILE`.
    public mutating func addHeader(forHost hostArgument: String, _ argument: String,
                                   readFile: FileReader = RequestHeaderRules.readFile) throws {
        guard let (scheme, host, port) = Self.parseOrigin(hostArgument) else {
            throw ImgWarmError.usage("--header-for: '\(hostArgument)' is not https://HOST[:PORT], http://HOST[:PORT] or HOST[:PORT] (IPv6 in brackets)")
        }
        for line in try Self.lines(of: argument, option: "--header-for \(hostArgument)", readFile: readFile) {
            scoped.append(Scoped(scheme: scheme ?? "https", host: host, port: port, schemeWritten: scheme != nil,
                                 argument: hostArgument, line: line))
        }
    }

    /// The lines an argument stands for, each checked.
    static func lines(of argument: String, option: String, readFile: FileReader) throws -> [String] {
        guard argument.hasPrefix("@") else {
            if let problem = problem(in: argument) { throw ImgWarmError.usage("\(option): \(problem)") }
            return [argument]
        }
        let path = String(argument.dropFirst())
        guard !path.isEmpty else { throw ImgWarmError.usage("\(option) @FILE: no file named") }
        let bytes = try readFile(path)
        var out: [String] = []
        for (n, raw) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            var line = raw
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let text = String(decoding: line, as: UTF8.self)
            if text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            if let problem = problem(in: text) { throw ImgWarmError.usage("\(path):\(n + 1): \(problem)") }
            out.append(text)
        }
        if out.isEmpty { throw ImgWarmError.usage("\(path): no header lines") }
        return out
    }

    /// What is wrong with a header line, or nil when it is one
    /// `Name: value` line. The one check of the project (the command line
    /// and `Downloader` both call it).
    public static func problem(in line: String) -> String? {
        // Scalars, not Characters: "\r\n" is a single Character.
        if line.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
            return "a header must be one 'Name: value' line (it holds a line break or NUL)"
        }
        guard let colon = line.firstIndex(of: ":") else {
            return "a header must be one 'Name: value' line (no colon)"
        }
        let name = line[..<colon]
        if name.trimmingCharacters(in: .whitespaces).isEmpty || name.contains(where: { $0 == " " || $0 == "\t" }) {
            return "a header must be one 'Name: value' line (a name without spaces)"
        }
        return nil
    }

    /// `https://` or `http://` (any case) and a `parseHost` authority, an
    /// optional `/` after it; the scheme is nil when not written.
    static func parseOrigin(_ text: String) -> (String?, String, Int?)? {
        var rest = Substring(text)
        var scheme: String?
        for s in ["https", "http"] where rest.lowercased().hasPrefix(s + "://") {
            scheme = s
            rest = rest.dropFirst(s.count + 3)
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            break
        }
        guard let (host, port) = parseHost(String(rest)) else { return nil }
        return (scheme, host, port)
    }

    /// `HOST` or `HOST:PORT` (`[IPv6]` or `[IPv6]:PORT`), lowercased.
    static func parseHost(_ text: String) -> (String, Int?)? {
        let t = text.lowercased()
        if t.hasPrefix("[") {
            guard let close = t.firstIndex(of: "]") else { return nil }
            let host = String(t[...close])
            let rest = t[t.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty, parts.count <= 2,
              !host.contains(where: { $0 == "/" || $0 == "@" || $0 == " " || $0 == "?" || $0 == "#" }) else { return nil }
        if parts.count == 1 { return (String(host), nil) }
        guard let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }

    /// The extra lines for one request: `--header` lines when the request
    /// goes to the entry URL's origin, and the `--header-for` lines of its
    /// host. `origin` is a `ParsedURL.hostKey` (`scheme://host:port`).
    public func lines(origin: String, isEntryOrigin: Bool) -> [String] {
        var out = isEntryOrigin ? entryOriginLines : []
        if !scoped.isEmpty, let o = Origin(hostKey: origin) {
            for rule in scoped where rule.matches(o) { out.append(rule.line) }
        }
        return out
    }

    /// Whether any `--header-for` rule names the host of `origin` (the
    /// engine then builds that origin its own header list).
    public func hasScopedLines(origin: String) -> Bool {
        guard !scoped.isEmpty, let o = Origin(hostKey: origin) else { return false }
        return scoped.contains { $0.matches(o) }
    }

    /// The bare `HOST[:PORT]` rules (https) whose host an http request to
    /// `origin` meets, at the rule's port (or any port when the rule names
    /// none): their header is not sent there, and the user should know
    /// (`http://HOST` sends it in cleartext). Arguments as given, once each.
    public func schemeMismatches(origin: String) -> [String] {
        guard !scoped.isEmpty, let o = Origin(hostKey: origin), o.scheme == "http" else { return [] }
        var out: [String] = []
        for rule in scoped where !rule.schemeWritten && rule.host == o.host && (rule.port == nil || rule.port == o.port)
            && !out.contains(rule.argument) {
            out.append(rule.argument)
        }
        return out
    }

    /// The warning for a bare rule an http request met; never quotes a
    /// header value.
    public static func schemeMismatchWarning(rule: String) -> String {
        "warning: --header-for \(rule) means https://\(rule): its header is not sent to http:// URLs of that host (write --header-for http://\(rule) to send it in cleartext)"
    }

    /// A `hostKey` taken apart.
    struct Origin {
        var scheme: Substring
        var host: String
        var port: Int

        init?(hostKey: String) {
            guard let sep = hostKey.range(of: "://"), let colon = hostKey.lastIndex(of: ":"), colon > sep.upperBound,
                  let port = Int(hostKey[hostKey.index(after: colon)...]) else { return nil }
            scheme = hostKey[..<sep.lowerBound]
            host = String(hostKey[sep.upperBound..<colon])
            self.port = port
        }
    }
}

extension RequestHeaderRules {
    /// `--header-for HOST HEADER` is two arguments, which the argument
    /// parser cannot read as one option: before parsing, each such pair
    /// is joined into one argument `HOST` + U+001F + `HEADER` (a host
    /// holds no control character, so the first one splits them again).
    /// Arguments after `--` are left alone.
    public static let pairSeparator: Character = "\u{1F}"

    public static func joiningHeaderForPairs(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a == "--" {
                out += arguments[i...]
                break
            }
            if a == "--header-for", i + 2 < arguments.count {
                out.append(a)
                out.append(arguments[i + 1] + String(pairSeparator) + arguments[i + 2])
                i += 3
                continue
            }
            if a.hasPrefix("--header-for="), i + 1 < arguments.count {
                out.append("--header-for")
                out.append(String(a.dropFirst("--header-for=".count)) + String(pairSeparator) + arguments[i + 1])
                i += 2
                continue
            }
            out.append(a)
            i += 1
        }
        return out
    }

    /// Splits a joined `--header-for` argument back into host and header.
    public static func splitPair(_ joined: String) -> (host: String, header: String)? {
        guard let sep = joined.firstIndex(of: pairSeparator) else { return nil }
        return (String(joined[..<sep]), String(joined[joined.index(after: sep)...]))
    }
}
