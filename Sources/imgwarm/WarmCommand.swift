import ArgumentParser
import Foundation
import ImgWarmKit
#if canImport(Glibc)
import Glibc
#endif

// Parsed as before the parser checked them: priority and order in any case
// (as `priority=HIGH` in a manifest), progress modes as written.
/// `--priority` by name: RequestPriority's raw values are numbers, which the
/// parser would show as the default.
enum PriorityName: String, CaseIterable, ExpressibleByArgument {
    case high, normal, low
    init?(argument: String) { self.init(rawValue: argument.lowercased()) }
    var priority: RequestPriority {
        switch self {
        case .high: .high
        case .normal: .normal
        case .low: .low
        }
    }
}
extension ExecutionOrder: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }
}
extension ProgressPrinter.Mode: ExpressibleByArgument {}

struct WarmCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "warm",
        abstract: "Download, validate and store every image of the manifests into the cache.",
        discussion: """
        A manifest line is `URL [priority=high|normal|low] [key=CACHEKEY]`, or a JSON object \
        {"url": ..., "priority": ..., "key": ...}; `#` starts a comment. `-` reads standard input.
        Each entry ends cached (already there: no request), blocked (in the failed-URL list), \
        downloaded, revalidated (--refresh got 304), duplicate, skipped, or failed with an error class.
        Exit status: 0 done (failed and blocked entries at or below --max-failures; also no entries at all); \
        1 more failures (a blocked entry is missing from the cache: a failure); 2 usage error, an unreadable \
        manifest, or a --report/--junit/--metrics path that cannot be written (checked before any request); \
        3 the cache cannot be used (not writable, disk full); 4 imgwarm itself could not run; 130 interrupted.
        """
    )

    @Argument(help: ArgumentHelp("Manifest files; `-` for standard input; an http(s) URL that is no file here is an entry itself.", valueName: "manifest|url"), completion: .file())
    var manifests: [String] = []

    @OptionGroup var cacheOptions: CacheOptions

    @Option(help: ArgumentHelp("How long a stored file lives before the app fetches it again (a duration, e.g. 7d, or never). kingfisher: the file's deadline [default: 7d, Kingfisher's]; okhttp: the stored response says Cache-Control: max-age=N instead of the server's freshness headers [default: the server's]", valueName: "duration"),
            transform: { try Parse.expiration($0) })
    var expiration: KingfisherLayout.Expiration?

    @Option(name: [.customShort("j"), .long],
            help: ArgumentHelp("Transfers in flight: auto (each host's limit adapts to its latency, 429s and errors, up to --max-concurrency and --per-host) or a fixed N.", valueName: "auto|n"))
    var concurrency: ConcurrencySetting = .auto

    @Option(name: .customLong("max-concurrency"), help: ArgumentHelp("With -j auto: most transfers in flight over all hosts.", valueName: "n"))
    var maxConcurrency: Int = 256

    @Option(name: .customLong("per-host"), help: "Transfers in flight per host. [default: unlimited]")
    var perHost: Int?

    @Option(name: .customLong("host-connections"),
            help: ArgumentHelp("Connections per host; over HTTP/1.1 also the transfers in flight per host (HTTP/2 multiplexes on them).", valueName: "n"))
    var hostConnections: Int = 6

    @Option(name: .customLong("rate"),
            help: ArgumentHelp("Requests a second per host (N/s or N/min), or for one host (HOST=N/s; repeatable). 429 and 503 answers lower a host's rate further.", valueName: "rate"))
    var rates: [String] = []

    @Option(name: .customLong("limit-rate"),
            help: ArgumentHelp("Bandwidth of the whole run (SIZE/s, as curl reads it: 1M = 1 MiB = 1,048,576 bytes a second, 1MB = 1,000,000). [default: unlimited]", valueName: "size/s"),
            transform: { try Parse.bandwidth($0) })
    var limitRate: UInt64?

    @Option(name: .customLong("download-threads"),
            help: ArgumentHelp("Download threads, each with its own connections and a share of -j (with auto: --max-concurrency), --per-host and --host-connections. [default: one per core (with --no-validate, per core of half the cores: store workers take the rest), at most one per 8 transfers, at most 4; never more than those limits, and a number that divides --per-host and --host-connections]", valueName: "n"))
    var downloadThreads: Int?

    @Option(help: ArgumentHelp("Priority of entries without their own: high, normal or low.", valueName: "priority"))
    var priority: PriorityName = .normal

    @Option(help: ArgumentHelp("Order within a priority: fifo (manifest order) or lifo (newest first).", valueName: "order"))
    var order: ExecutionOrder = .fifo

    @Flag(name: .customLong("retry-failed"), help: "Fetch URLs of the failed-URL list again instead of reporting them blocked.")
    var retryFailed = false

    @Option(name: [.customLong("retries"), .customLong("retry")], help: "Extra attempts for transient failures (timeouts, resets, 408, 429, 5xx); --retry is curl's name.")
    var retries: Int = 2

    @Option(help: ArgumentHelp("Time per request attempt (a duration: 15, 15s, 2m). [default: 15s]", valueName: "duration"), transform: Parse.duration)
    var timeout: Double = 15

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Time to connect (a duration: 10, 10s). [default: 10s]", valueName: "duration"), transform: Parse.duration)
    var connectTimeout: Double = 10

    @Flag(help: "Revalidate cached entries (If-None-Match / If-Modified-Since): 304 keeps the file, 200 replaces it.")
    var refresh = false

    @Option(name: .customLong("max-bytes"), help: ArgumentHelp("Largest accepted body (e.g. 500k, 128MiB). [default: 64MiB]", valueName: "size"), transform: Parse.size)
    var maxBytes: UInt64 = 64 << 20

    @Option(name: .customLong("max-pixels"), help: "Largest accepted width x height.")
    var maxPixels: UInt64 = 100_000_000

    @Option(name: .customLong("decode-memory"), help: ArgumentHelp("Memory all decoders may hold at once, estimated from each image's header; an image waits for its share, one over the whole fails as too-large. [default: a quarter of the cgroup's memory limit or of RAM, at most 1GiB]", valueName: "size"), transform: Parse.size)
    var decodeMemory: UInt64?

    @Option(name: .customLong("decode-timeout"), help: ArgumentHelp("CPU time one image's decoder may take (e.g. 10s, 1m); an image stopped by it fails as too-complex, kept off the failed-URL list. [default: 10s]", valueName: "duration"), transform: Parse.duration)
    var decodeTimeout: Double = ValidationOptions.defaultDecodeTimeout

    @Option(name: .customLong("memory"), help: ArgumentHelp("Memory the bodies in flight and the decoders may hold together; a transfer pauses while bodies fill what --decode-memory leaves. [default: half the cgroup's memory limit or of RAM, at most 2GiB]", valueName: "size"), transform: Parse.size)
    var memory: UInt64?

    @Flag(name: .customLong("no-validate"), help: "Store without decoding (the data must still look like an image).")
    var noValidate = false

    @Flag(name: .customLong("strict-formats"), help: "Reject formats not decoded here (docs/validation.md) and data of an unknown format instead of accepting them on their signature.")
    var strictFormats = false

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("Extra request header 'Name: value', or @FILE for the header lines of FILE (values stay out of the process list); sent only to the scheme, host and port of each entry's own URL, never across a redirect to another (repeatable; values are never printed).", valueName: "header"))
    var headers: [String] = []

    @Option(name: .customLong("header-for"), help: ArgumentHelp("A header for one origin only: --header-for https://HOST[:PORT] 'Name: value' (or @FILE), also after a redirect to it; a bare HOST[:PORT] means https, http:// only when written; without a port, the scheme's default port (repeatable).", valueName: "host> <header"))
    var headersFor: [String] = []

    @Option(name: .customLong("redact-query"), help: ArgumentHelp("A query parameter whose value is masked in every output, besides the default token and signature names (repeatable; case-insensitive).", valueName: "name"))
    var redactQuery: [String] = []

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: ArgumentHelp("User-Agent header. [default: imgwarm/VERSION]", valueName: "string"))
    var userAgent: String?

    @Flag(name: [.customShort("k"), .long], help: "Accept invalid TLS certificates (warns, and the report records it).")
    var insecure = false

    @OptionGroup var network: NetworkOptions

    @Flag(name: .customLong("allow-http-redirect"), help: "Follow redirects from https to http (by default such an entry fails as insecure-redirect: an app under App Transport Security refuses the load).")
    var allowHTTPRedirect = false

    @Flag(name: .customLong("key-strip-query"), help: "Cache keys without query and fragment (apps whose cacheKeyFilter strips signed-URL parameters).")
    var keyStripQuery = false

    @Option(help: ArgumentHelp("Only the entries whose key hashes to shard K of N (K from 1 to N).", valueName: "K/N"))
    var shard: String?

    @Option(help: ArgumentHelp("Split into N shards and take K from JOB_COMPLETION_INDEX (0-based, as Kubernetes Indexed Jobs set it).", valueName: "N"))
    var shards: Int?

    @Option(help: ArgumentHelp("Stop fetching new entries once the cache would pass SIZE (highest priority first).", valueName: "size"), transform: Parse.size)
    var budget: UInt64?

    @Option(name: .customLong("retry-from"), help: ArgumentHelp("Take the failed entries of an earlier --report as the manifest (implies --retry-failed).", valueName: "report"), completion: .file(extensions: ["json"]))
    var retryFrom: [String] = []

    @Flag(name: .customLong("dry-run"), help: "Say what would be fetched, skipped and blocked; no request, nothing written.")
    var dryRun = false

    @Flag(help: "Write into an existing folder that is not recognisably a cache of the layout (see cache clear --force).")
    var force = false

    @Option(help: ArgumentHelp("Write a JSON report (atomically, also on interrupt).", valueName: "file"), completion: .file())
    var report: String?

    @Option(help: ArgumentHelp("Write the results as JUnit XML, one test case per entry.", valueName: "file"), completion: .file())
    var junit: String?

    @Option(help: ArgumentHelp("Write Prometheus metrics (textfile collector format), atomically.", valueName: "file"), completion: .file())
    var metrics: String?

    @Option(name: .customLong("max-failures"), help: "Exit 0 while failed entries stay at or below N.")
    var maxFailures: Int = 0

    @Option(help: ArgumentHelp("auto (a bar on a terminal, plain lines otherwise), bar, lines or none.", valueName: "mode"))
    var progress: ProgressPrinter.Mode = .auto

    @Flag(name: .shortAndLong, help: "Only errors: no progress, no summary.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Print every entry as it finishes.")
    var verbose = false

    func validate() throws {
        if manifests.isEmpty && retryFrom.isEmpty {
            throw ValidationError("give at least one manifest (or - for standard input, or --retry-from REPORT)")
        }
        if case .fixed(let n) = concurrency, n < 1 { throw ValidationError("--concurrency must be auto or at least 1") }
        if maxConcurrency < 1 { throw ValidationError("--max-concurrency must be at least 1") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host must be at least 1") }
        if hostConnections < 1 { throw ValidationError("--host-connections must be at least 1") }
        if limitRate == 0 { throw ValidationError("--limit-rate must be more than 0 bytes a second") }
        do { _ = try requestRates() } catch { throw ValidationError("\(error)") }
        if let downloadThreads, downloadThreads < 1 { throw ValidationError("--download-threads must be at least 1") }
        if retries < 0 { throw ValidationError("--retries must be 0 or more") }
        if !(timeout > 0) { throw ValidationError("--timeout must be positive") }
        if !(connectTimeout > 0) { throw ValidationError("--connect-timeout must be positive") }
        if maxPixels < 1 { throw ValidationError("--max-pixels must be at least 1") }
        if decodeMemory == 0 { throw ValidationError("--decode-memory must be at least 1 byte") }
        if !(decodeTimeout > 0) { throw ValidationError("--decode-timeout must be positive") }
        if memory == 0 { throw ValidationError("--memory must be at least 1 byte") }
        if let memory, let decodeMemory, decodeMemory > memory {
            throw ValidationError("--decode-memory (\(decodeMemory) bytes) must not exceed --memory (\(memory) bytes): the decoders' share is part of it")
        }
        if maxFailures < 0 { throw ValidationError("--max-failures must be 0 or more") }
        if shard != nil && shards != nil { throw ValidationError("use either --shard K/N or --shards N") }
        // Output files are checked before the first request: a typo in a
        // folder name must not cost a whole run.
        for (flag, path) in [("--report", report), ("--junit", junit), ("--metrics", metrics)] {
            guard let path else { continue }
            if let problem = AtomicFileWriter.targetProblem(path) { throw ValidationError("\(flag) \(path): \(problem)") }
        }
        // Header arguments are read (files too) and checked here, so a bad
        // one is a usage error (exit 2), not a failure after the cache was
        // prepared. The value is never quoted.
        do { _ = try headerRules() } catch let problem as ImgWarmError { throw ValidationError(problem.description) }
        if let bad = redactQuery.first(where: { $0.isEmpty || $0.contains(where: { $0 == "=" || $0 == "&" }) }) {
            throw ValidationError("--redact-query takes a parameter name (no '=' or '&'): '\(bad)'")
        }
        if manifests.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input (-) can be read once") }
        _ = try shardSelection()
        // A folder that contradicts the layout (an ImgWarmError, exit 3) is
        // said by run(): the parser would turn it into exit 1 here.
        do { _ = try layout() } catch let error as ImgWarmError where error.exitStatus == ExitStatus.usage {
            throw ValidationError(error.description)
        } catch is ImgWarmError {}
    }

    /// `--header` and `--header-for` read into the one owner of header
    /// rules (files named with @ are read here).
    func headerRules() throws -> RequestHeaderRules {
        var rules = RequestHeaderRules()
        for h in headers { try rules.addHeader(h) }
        for joined in headersFor {
            guard let (host, header) = RequestHeaderRules.splitPair(joined) else {
                throw ImgWarmError.usage("--header-for takes two arguments: [https://]HOST[:PORT] 'Name: value' (or @FILE)")
            }
            try rules.addHeader(forHost: host, header)
        }
        return rules
    }

    /// The layout with warm's settings: `--expiration` is Kingfisher's
    /// (the others keep no deadline in their files).
    func layout() throws -> any BuiltInLayout {
        // configuredLayout first: its usage errors (exit 2) come before
        // what the folder holds (exit 3).
        let configured = try cacheOptions.configuredLayout()
        let kind = configured.kind
        guard let expiration else { return configured }
        if kind == .okhttp { return OkHttpLayout(maxAge: OkHttpLayout.maxAge(expiration)) }
        guard kind == .kingfisher else {
            throw ValidationError("--expiration has no meaning under --layout \(kind.rawValue): only Kingfisher and OkHttp keep a deadline in their entries")
        }
        return KingfisherLayout(expiration: expiration)
    }

    func shardSelection() throws -> WarmPlan.Shard? {
        if let shard {
            let parts = shard.split(separator: "/")
            guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, k >= 1, k <= n else {
                throw ValidationError("--shard must be K/N with 1 <= K <= N, e.g. 2/3")
            }
            return WarmPlan.Shard(index: k, count: n)
        }
        if let shards {
            guard shards >= 1 else { throw ValidationError("--shards must be at least 1") }
            guard let raw = ProcessInfo.processInfo.environment["JOB_COMPLETION_INDEX"] else {
                throw ValidationError("--shards N takes the shard from JOB_COMPLETION_INDEX, which is not set (use --shard K/N)")
            }
            guard let i = Int(raw), i >= 0, i < shards else {
                throw ValidationError("JOB_COMPLETION_INDEX=\(raw) is not a shard index from 0 to \(shards - 1)")
            }
            return WarmPlan.Shard(index: i + 1, count: shards)
        }
        return nil
    }

    /// The arguments that are manifest files (or `-`), and those that are
    /// URLs to warm: an http(s) URL that names no file here.
    var inputs: (files: [String], urls: [String]) {
        var files: [String] = [], urls: [String] = []
        for a in manifests {
            let lower = a.prefix(8).lowercased()
            let isURL = lower.hasPrefix("http://") || lower.hasPrefix("https://")
            if isURL && !FileManager.default.fileExists(atPath: a) { urls.append(a) } else { files.append(a) }
        }
        return (files, urls)
    }

    func run() throws {
        let status = try WarmRun(command: self).execute()
        if status != 0 { throw ExitCode(status) }
    }
}

/// `-j auto` or `-j N`.
enum ConcurrencySetting: Equatable, ExpressibleByArgument {
    case auto
    case fixed(Int)

    init?(argument: String) {
        if argument.lowercased() == "auto" {
            self = .auto
        } else if let n = Int(argument) {
            self = .fixed(n)
        } else {
            return nil
        }
    }

    var defaultValueDescription: String {
        switch self {
        case .auto: "auto"
        case .fixed(let n): String(n)
        }
    }
}

extension WarmCommand {
    /// The `--rate` values as one rule set.
    func requestRates() throws -> RequestRates {
        var rates = RequestRates()
        for text in self.rates { try rates.add(text) }
        return rates
    }

    /// The engine's limits from -j, --max-concurrency, --per-host,
    /// --host-connections, --rate and --limit-rate.
    func applyLimits(to config: inout DownloaderConfiguration) throws {
        switch concurrency {
        case .auto:
            config.adaptive = true
            config.concurrency = maxConcurrency
        case .fixed(let n):
            config.adaptive = false
            config.concurrency = n
        }
        config.perHost = perHost
        config.hostConnections = hostConnections
        config.rates = try requestRates()
        // Not `map(Double.init)`: with a UInt64 that picks init(bitPattern:).
        config.bytesPerSecond = limitRate.map { Double($0) }
    }

    /// `-j8` as curl's and make's users type it: one argument, the number
    /// attached. The argument parser takes a short option's value only as
    /// the next argument, so it is split first. Only `-j` followed by
    /// digits or `auto`, and never after `--`.
    static func splitAttachedConcurrency(_ args: [String]) -> [String] {
        var out: [String] = []
        var afterDashes = false
        for a in args {
            if a == "--" { afterDashes = true }
            if !afterDashes, a.hasPrefix("-j"), a.count > 2 {
                let value = a.dropFirst(2)
                if value.allSatisfy(\.isASCII) && (value.allSatisfy(\.isNumber) || value.lowercased() == "auto") {
                    out += ["-j", String(value)]
                    continue
                }
            }
            out.append(a)
        }
        return out
    }
}
