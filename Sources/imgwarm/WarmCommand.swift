import ArgumentParser
import Foundation
import ImgWarmKit
#if canImport(Glibc)
import Glibc
#endif

struct WarmCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "warm",
        abstract: "Download, validate and store every image of the manifests into the cache.",
        discussion: """
        A manifest line is `URL [priority=high|normal|low] [key=CACHEKEY]`, or a JSON object \
        {"url": ..., "priority": ..., "key": ...}; `#` starts a comment. `-` reads standard input.
        Each entry ends cached (already there: no request), blocked (in the failed-URL list), \
        downloaded, revalidated (--refresh got 304), duplicate, skipped, or failed with an error class.
        Exit status: 0 done (failures at or below --max-failures); 1 more failures; 2 usage error or \
        no usable input; 3 the cache cannot be used (not writable, disk full); 130 interrupted.
        """
    )

    @Argument(help: ArgumentHelp("Manifest files; `-` for standard input.", valueName: "manifest"))
    var manifests: [String] = []

    @OptionGroup var cacheOptions: CacheOptions

    @Option(help: ArgumentHelp("How long a stored file lives before the app fetches it again (a duration, e.g. 7d, or never). kingfisher only. [default: 7d, Kingfisher's]", valueName: "duration"),
            transform: { try Parse.expiration($0) })
    var expiration: KingfisherLayout.Expiration?

    @Option(name: [.customShort("j"), .long], help: "Transfers in flight.")
    var concurrency: Int = 16

    @Option(name: .customLong("per-host"), help: "Transfers in flight per host. [default: unlimited]")
    var perHost: Int?

    @Option(name: .customLong("download-threads"),
            help: ArgumentHelp("Download threads, each with its own connections and a share of -j and --per-host. [default: one per core, at most one per 8 transfers, at most 4; never more than -j, and with --per-host a number that divides it]", valueName: "n"))
    var downloadThreads: Int?

    @Option(help: ArgumentHelp("Priority of entries without their own: high, normal or low.", valueName: "priority"))
    var priority: String = "normal"

    @Option(help: ArgumentHelp("Order within a priority: fifo (manifest order) or lifo (newest first).", valueName: "order"))
    var order: String = "fifo"

    @Flag(name: .customLong("retry-failed"), help: "Fetch URLs of the failed-URL list again instead of skipping them.")
    var retryFailed = false

    @Option(help: "Extra attempts for transient failures (timeouts, resets, 408, 429, 5xx).")
    var retries: Int = 2

    @Option(help: ArgumentHelp("Seconds per request attempt.", valueName: "seconds"))
    var timeout: Double = 15

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Seconds to connect.", valueName: "seconds"))
    var connectTimeout: Double = 10

    @Flag(help: "Revalidate cached entries (If-None-Match / If-Modified-Since): 304 keeps the file, 200 replaces it.")
    var refresh = false

    @Option(name: .customLong("max-bytes"), help: ArgumentHelp("Largest accepted body (e.g. 64MiB, 500k).", valueName: "size"), transform: Parse.size)
    var maxBytes: UInt64 = 64 << 20

    @Option(name: .customLong("max-pixels"), help: "Largest accepted width x height.")
    var maxPixels: UInt64 = 100_000_000

    @Flag(name: .customLong("no-validate"), help: "Store without decoding (the data must still look like an image).")
    var noValidate = false

    @Flag(name: .customLong("strict-formats"), help: "Reject formats not decoded here (README, Validation) and data of an unknown format instead of accepting them on their signature.")
    var strictFormats = false

    @Option(name: .customLong("header"), help: ArgumentHelp("Extra request header 'Name: value', or @FILE for the header lines of FILE (values stay out of the process list); sent only to the scheme, host and port of each entry's own URL, never across a redirect to another (repeatable; values are never printed).", valueName: "header"))
    var headers: [String] = []

    @Option(name: .customLong("header-for"), help: ArgumentHelp("A header for one host only: --header-for HOST[:PORT] 'Name: value' (or @FILE), also after a redirect to it; without a port, the scheme's default port (repeatable).", valueName: "host> <header"))
    var headersFor: [String] = []

    @Option(name: .customLong("redact-query"), help: ArgumentHelp("A query parameter whose value is masked in every output, besides the default token and signature names (repeatable; case-insensitive).", valueName: "name"))
    var redactQuery: [String] = []

    @Option(name: .customLong("user-agent"), help: ArgumentHelp("User-Agent header. [default: imgwarm/VERSION]", valueName: "string"))
    var userAgent: String?

    @Flag(help: "Accept invalid TLS certificates (warns, and the report records it).")
    var insecure = false

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

    @Option(name: .customLong("retry-from"), help: ArgumentHelp("Take the failed entries of an earlier --report as the manifest.", valueName: "report"))
    var retryFrom: [String] = []

    @Flag(name: .customLong("dry-run"), help: "Say what would be fetched, skipped and blocked; no request, nothing written.")
    var dryRun = false

    @Option(help: ArgumentHelp("Write a JSON report (atomically, also on interrupt).", valueName: "file"))
    var report: String?

    @Option(help: ArgumentHelp("Write the results as JUnit XML, one test case per entry.", valueName: "file"))
    var junit: String?

    @Option(help: ArgumentHelp("Write Prometheus metrics (textfile collector format), atomically.", valueName: "file"))
    var metrics: String?

    @Option(name: .customLong("max-failures"), help: "Exit 0 while failed entries stay at or below N.")
    var maxFailures: Int = 0

    @Option(help: ArgumentHelp("auto (a bar on a terminal, plain lines otherwise), bar, lines or none.", valueName: "mode"))
    var progress: String = "auto"

    @Flag(name: .shortAndLong, help: "Only errors: no progress, no summary.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Print every entry as it finishes.")
    var verbose = false

    func validate() throws {
        if manifests.isEmpty && retryFrom.isEmpty {
            throw ValidationError("give at least one manifest (or - for standard input, or --retry-from REPORT)")
        }
        if concurrency < 1 { throw ValidationError("--concurrency must be at least 1") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host must be at least 1") }
        if let downloadThreads, downloadThreads < 1 { throw ValidationError("--download-threads must be at least 1") }
        if retries < 0 { throw ValidationError("--retries must be 0 or more") }
        if !(timeout > 0) { throw ValidationError("--timeout must be positive") }
        if !(connectTimeout > 0) { throw ValidationError("--connect-timeout must be positive") }
        if maxPixels < 1 { throw ValidationError("--max-pixels must be at least 1") }
        if maxFailures < 0 { throw ValidationError("--max-failures must be 0 or more") }
        if RequestPriority(name: priority) == nil { throw ValidationError("--priority must be high, normal or low") }
        if ExecutionOrder(rawValue: order.lowercased()) == nil { throw ValidationError("--order must be fifo or lifo") }
        if ProgressPrinter.Mode(rawValue: progress) == nil { throw ValidationError("--progress must be auto, bar, lines or none") }
        if shard != nil && shards != nil { throw ValidationError("use either --shard K/N or --shards N") }
        // Header arguments are read (files too) and checked here, so a bad
        // one is a usage error (exit 2), not a failure after the cache was
        // prepared. The value is never quoted.
        do { _ = try headerRules() } catch let problem as RequestHeaderRules.Problem { throw ValidationError(problem.description) }
        if let bad = redactQuery.first(where: { $0.isEmpty || $0.contains(where: { $0 == "=" || $0 == "&" }) }) {
            throw ValidationError("--redact-query takes a parameter name (no '=' or '&'): '\(bad)'")
        }
        if manifests.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input (-) can be read once") }
        _ = try shardSelection()
        do { _ = try layout() } catch let failure as Failure { throw ValidationError(failure.message) }
    }

    /// `--header` and `--header-for` read into the one owner of header
    /// rules (files named with @ are read here).
    func headerRules() throws -> RequestHeaderRules {
        var rules = RequestHeaderRules()
        for h in headers { try rules.addHeader(h) }
        for joined in headersFor {
            guard let (host, header) = RequestHeaderRules.splitPair(joined) else {
                throw RequestHeaderRules.Problem(description: "--header-for takes two arguments: HOST[:PORT] 'Name: value' (or @FILE)")
            }
            try rules.addHeader(forHost: host, header)
        }
        return rules
    }

    /// The layout with warm's settings: `--expiration` is Kingfisher's
    /// (the others keep no deadline in their files).
    func layout() throws -> any CacheLayout {
        let kind = try cacheOptions.layoutKind()
        guard let expiration else { return kind.layout() }
        guard kind == .kingfisher else {
            throw ValidationError("--expiration has no meaning under --layout \(kind.rawValue): only Kingfisher stores a deadline in its files")
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

    func run() throws {
        let status = try WarmRun(command: self).execute()
        if status != 0 { throw ExitCode(status) }
    }
}
