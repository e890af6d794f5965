import ImgWarmSupport
/// The vocabulary of SDWebImageDownloader, for batch use.

public enum RequestPriority: Int, Comparable, Sendable, CaseIterable, Codable {
    case low = 0, normal = 1, high = 2
    public static func < (a: RequestPriority, b: RequestPriority) -> Bool { a.rawValue < b.rawValue }
    public init?(name: String) {
        switch name.lowercased() {
        case "high": self = .high
        case "normal": self = .normal
        case "low": self = .low
        default: return nil
        }
    }
    public var name: String { ["low", "normal", "high"][rawValue] }
}

public struct DownloaderConfiguration: Sendable {
    /// Transfers in flight at once (all hosts): the fixed limit of `-j N`,
    /// or with `adaptive` the ceiling (`--max-concurrency`).
    public var concurrency: Int = 16
    /// `-j auto`: each host's limit adapts to its latency and answers
    /// (`ConcurrencyLimiter`), up to `concurrency` and `perHost`.
    public var adaptive = false
    /// Transfers in flight per host; nil for no limit.
    public var perHost: Int? = nil
    /// Connections per host (curl's CURLMOPT_MAX_HOST_CONNECTIONS over all
    /// engine threads). Over HTTP/1.1 also the requests in flight per host;
    /// HTTP/2 multiplexes its streams on them.
    public var hostConnections: Int = 6
    /// `--rate`: requests a second, for every host or per host.
    public var rates = RequestRates()
    /// `--limit-rate`: bytes a second for the whole run; nil for no cap.
    public var bytesPerSecond: Double? = nil
    /// Engine threads, each with its own curl multi handle and a share of
    /// the limits above; nil picks them (`LoopSplit`).
    public var loops: Int? = nil
    /// Cores the automatic number of engine threads is taken from; nil:
    /// the machine's. A caller whose own threads take some cores (the
    /// store workers of `warm --no-validate`) gives the engine the rest.
    public var cores: Int? = nil
    /// `-v`: a line per host whenever its limit or rate moves (any thread).
    public var onLimitChange: (@Sendable (String) -> Void)? = nil
    /// Warnings about the run's options met during it (a bare
    /// `--header-for` host over http), each line once (any thread).
    public var onWarning: (@Sendable (String) -> Void)? = nil
    /// Whole-request timeout per attempt, seconds.
    public var timeout: Double = 15
    public var connectTimeout: Double = 10
    /// Largest accepted body; a larger one is aborted at once.
    public var maxBodyBytes: Int = 64 << 20
    /// Extra attempts for transient failures.
    public var retries: Int = 2
    /// First backoff delay; doubles per attempt, with jitter.
    public var backoffBase: Double = 0.5
    /// Longest wait honoured from a Retry-After header, and for backoff.
    public var maxRetryDelay: Double = 30
    public var userAgent: String = ImgWarmVersion.userAgent
    /// Extra request headers and the hosts they go to.
    public var headerRules = RequestHeaderRules()
    /// `--header` lines (for the entry URL's origin only).
    public var headers: [String] {
        get { headerRules.entryOriginLines }
        set { headerRules.entryOriginLines = newValue }
    }
    /// `--memory`: the budget of the bodies in flight and waiting for a
    /// decoder (nil: none).
    public var bodyMemory: BodyMemory? = nil
    /// Where bodies past the spill threshold go; nil: every body stays in
    /// memory.
    public var bodySpill: BodySpill? = nil
    /// Accept invalid TLS certificates.
    public var insecure: Bool = false
    /// Keep every response header and the TLS session of each success
    /// (`DownloadResponse.headerFields`, `tls`): what OkHttp's cache stores.
    public var recordsResponseDetail = false
    /// Follow a redirect from https to http (refused by default: the app,
    /// under App Transport Security, would refuse the load).
    public var allowHTTPRedirect: Bool = false
    /// The CA bundle and CA folder (`--cacert`, `--capath` or the curl
    /// tool's variables: `CurlTransportOptions.certificateAuthorities`);
    /// nil leaves libcurl's built-in default.
    public var caFile: String? = nil
    public var caPath: String? = nil
    /// `--proxy` and `--noproxy`; nil lets libcurl read the proxy variables
    /// itself (docs/network.md).
    public var proxy: String? = nil
    public var noProxy: String? = nil
    /// `--netrc`, `--netrc-optional`, `--netrc-file`.
    public var netrc: NetrcUse = .ignored
    public var netrcFile: String? = nil
    public init() {}
}

/// How a .netrc file is used (CURLOPT_NETRC).
public enum NetrcUse: Sendable, Equatable {
    case ignored, optional, required
}

/// HTTP validators for a conditional request (`--refresh`).
public struct HTTPValidators: Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?
    public init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

public struct DownloadRequest: Sendable {
    public var url: String
    public var priority: RequestPriority
    /// When set, sent as If-None-Match / If-Modified-Since.
    public var validators: HTTPValidators?
    /// The per-host limit's key (`ParsedURL.hostKey`), when the caller
    /// parsed the URL already; else the engine parses it.
    public var hostKey: String?
    public init(url: String, priority: RequestPriority = .normal, validators: HTTPValidators? = nil, hostKey: String? = nil) {
        self.url = url
        self.priority = priority
        self.validators = validators
        self.hostKey = hostKey
    }
}

/// Error classes of the product contract that the network can produce.
public enum DownloadErrorClass: String, Sendable, Codable {
    case httpStatus = "http-status"
    case tooLarge = "too-large"
    case timeout
    case network
    case tls
    case invalidURL = "invalid-url"
    /// A redirect from https to http, without `--allow-http-redirect`.
    case insecureRedirect = "insecure-redirect"
    case cancelled
    /// The body's spill file in the cache's `.imgwarm/tmp` could not be
    /// written (a full disk) or mapped.
    case disk
}

public struct DownloadResponse: Sendable {
    /// Final HTTP status (2xx, or 304 for `notModified`).
    public var status: Int
    /// The body when it stayed in memory; empty when it was spilled.
    public var body: [UInt8]
    /// The body's file when it grew past the spill threshold (`BodySpill`).
    public var spilled: SpilledBody?
    /// The body wherever it is.
    public var bodyBytes: BodyBytes { BodyBytes(memory: body, file: spilled) }
    public var bodyCount: Int { spilled?.count ?? body.count }
    public var etag: String?
    public var lastModified: String?
    public var contentType: String?
    /// The `Vary` header: a response that varies on `Accept` may be
    /// another format for the app's own Accept header.
    public var vary: String?
    /// URL after redirects.
    public var effectiveURL: String?
    /// The body's share of `--memory`, released when the last copy of the
    /// response is dropped.
    public var bodyCharge: BodyMemory.Charge?
    /// The freshness headers an Android/Flutter layout keeps (Coil 3's
    /// metadata, flutter's validTill); nil when absent.
    public var cacheControl: String?
    public var expires: String?
    public var date: String?
    public var age: String?
    /// Attempts made, 1 when the first one succeeded.
    public var attempts: Int
    /// Seconds from the first attempt's start to the end.
    public var elapsed: Double
    /// Every header of the final response, in order, as received (OkHttp's
    /// cache keeps them all); empty unless `recordsResponseDetail`.
    public var headerFields: [HeaderField] = []
    /// The final response's HTTP version: 10, 11, 2 or 3 (0: unknown).
    public var httpVersion = 0
    /// The TLS session of an https response, when `recordsResponseDetail`.
    public var tls: TLSFacts?
    public init(status: Int, body: [UInt8], etag: String? = nil, lastModified: String? = nil, contentType: String? = nil,
                vary: String? = nil, effectiveURL: String? = nil, attempts: Int = 1, elapsed: Double = 0) {
        self.status = status
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
        self.vary = vary
        self.effectiveURL = effectiveURL
        self.attempts = attempts
        self.elapsed = elapsed
    }
}

public struct DownloadFailure: Error, Sendable, CustomStringConvertible {
    public var errorClass: DownloadErrorClass
    /// Last HTTP status seen, if any.
    public var status: Int?
    /// One line, secrets removed.
    public var message: String
    /// Transient failures (timeouts, connection errors, 408, 429, 5xx,
    /// truncated bodies) never enter the failed-URL list.
    public var isTransient: Bool
    public var attempts: Int
    public var elapsed: Double
    /// The last response's Content-Type (an error page's text/html), if
    /// there was a response.
    public var contentType: String?
    /// Class `disk`: the error behind it (its errno says whether the
    /// cache's filesystem is full, which stops the run).
    public var diskError: ImgWarmError?
    public init(errorClass: DownloadErrorClass, status: Int?, message: String, isTransient: Bool, attempts: Int, elapsed: Double,
                contentType: String? = nil) {
        self.errorClass = errorClass
        self.status = status
        self.message = message
        self.isTransient = isTransient
        self.attempts = attempts
        self.elapsed = elapsed
        self.contentType = contentType
    }
    public var description: String { message }
}

public enum DownloadResult: Sendable {
    case success(DownloadResponse)
    /// 304 to a conditional request: the body is empty.
    case notModified(DownloadResponse)
    case failure(DownloadFailure)
}
