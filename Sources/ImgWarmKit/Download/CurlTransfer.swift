import CCurl
import Foundation

/// One attempt on one easy handle: sets the handle up for the job, collects
/// the body within the size limit, and reads the result when curl is done.
/// Lives on the engine thread; the event loop keeps it alive while the handle
/// is in the multi handle (curl holds only an unretained pointer to it).
final class CurlTransfer {
    let job: DownloadJob
    let handle: UnsafeMutableRawPointer
    private let maxBodyBytes: Int
    /// Error pages are not kept; one larger than this is cut off (its status
    /// is all we need, and a huge one would only delay the retry).
    private static let errorBodyLimit = 64 << 10

    private var body: [UInt8] = []
    /// Bytes received of the current response's body.
    private var received = 0
    /// The status whose body is arriving; 0 before the first byte. Checked on
    /// every write so that a body of an intermediate response (a redirect)
    /// can never be mixed into, or counted against, the final one.
    private var bodyStatus = 0
    private var keepBody = false
    private(set) var bodyLimitHit = false
    private(set) var errorBodyDropped = false
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// The headers every request of the configuration sends.
    private let headers: RequestHeaders
    /// Monotonic seconds when the attempt started (a 429 to a request
    /// started before the host's last rate cut does not cut again).
    let startedAt: Double
    /// With --limit-rate: the shared byte bucket, and the engine thread's
    /// list of transfers paused for want of bytes.
    private let bandwidth: Bandwidth?

    /// --limit-rate's parts on one engine thread.
    final class Bandwidth {
        let traffic: HostTraffic
        var paused: [CurlTransfer] = []
        init(traffic: HostTraffic) { self.traffic = traffic }
    }

    init(job: DownloadJob, handle: UnsafeMutableRawPointer, maxBodyBytes: Int, headers: RequestHeaders,
         startedAt: Double, bandwidth: Bandwidth?) {
        self.job = job
        self.handle = handle
        self.maxBodyBytes = maxBodyBytes
        self.headers = headers
        self.startedAt = startedAt
        self.bandwidth = bandwidth
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Sets the attempt's options: the fixed ones of the configuration only
    /// on a `fresh` handle (a reused one keeps them, see EasyHandlePool),
    /// and on every handle each option that differs per request, each set
    /// every time so nothing of the previous request carries over.
    func configure(_ config: DownloaderConfiguration, fresh: Bool) {
        let h = handle
        if fresh {
            // Signals are unusable for DNS timeouts in a threaded program.
            imgwarm_easy_setopt_long(h, CURLOPT_NOSIGNAL, 1)
            // 16 KiB by default: a 300 KB image then takes ~20 reads and polls.
            // Under --limit-rate at most a tenth of a second's bytes, so one
            // read never takes much more than the bucket's burst.
            let buffer = config.bytesPerSecond.map { min(256 * 1024, max(1024, Int($0 * TokenBucket.burstSeconds))) }
            imgwarm_easy_setopt_long(h, CURLOPT_BUFFERSIZE, buffer ?? 256 * 1024)
            imgwarm_easy_setopt_long(h, CURLOPT_FOLLOWLOCATION, 1)
            imgwarm_easy_setopt_long(h, CURLOPT_MAXREDIRS, 10)
            // Nothing but http(s), also after a redirect (no file://, ftp://...).
            imgwarm_easy_setopt_str(h, CURLOPT_PROTOCOLS_STR, "http,https")
            imgwarm_easy_setopt_str(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
            // "" = every encoding this libcurl decodes (gzip, br, zstd).
            imgwarm_easy_setopt_str(h, CURLOPT_ACCEPT_ENCODING, "")
            imgwarm_easy_setopt_long(h, CURLOPT_TIMEOUT_MS, Self.milliseconds(config.timeout))
            imgwarm_easy_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(config.connectTimeout))
            imgwarm_easy_setopt_long(h, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            imgwarm_easy_setopt_long(h, CURLOPT_SSL_VERIFYPEER, config.insecure ? 0 : 1)
            imgwarm_easy_setopt_long(h, CURLOPT_SSL_VERIFYHOST, config.insecure ? 0 : 2)
            imgwarm_easy_setopt_str(h, CURLOPT_USERAGENT, config.userAgent)
            // MAXFILESIZE 0 means "no limit" to curl; the write callback covers 0.
            if maxBodyBytes > 0 {
                imgwarm_easy_setopt_off(h, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBodyBytes))
            }
            imgwarm_easy_setopt_datacb(h, CURLOPT_WRITEFUNCTION, curlTransferWrite)
        }
        imgwarm_easy_setopt_str(h, CURLOPT_URL, job.url)
        // Wait for a connection that can multiplex rather than open another.
        // Only over https: HTTP/2 comes from ALPN, so a cleartext connection
        // never multiplexes, and PIPEWAIT would make every new transfer to a
        // host wait for the first response from it.
        imgwarm_easy_setopt_long(h, CURLOPT_PIPEWAIT, Self.isHTTPS(job.url) ? 1 : 0)
        imgwarm_easy_setopt_ptr(h, CURLOPT_ERRORBUFFER, errorBuffer)
        imgwarm_easy_setopt_ptr(h, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())

        // A request without validators sends the shared list (curl reads
        // it, never changes or frees it); one with validators its own.
        if let validators = job.validators {
            headerList = RequestHeaders.list(headers.lines + RequestHeaders.conditionalLines(validators))
            imgwarm_easy_setopt_slist(h, CURLOPT_HTTPHEADER, headerList)
        } else {
            imgwarm_easy_setopt_slist(h, CURLOPT_HTTPHEADER, headers.shared)
        }
    }

    /// Whether the URL's scheme is https (any case), from its bytes.
    static func isHTTPS(_ url: String) -> Bool {
        var utf8 = url.utf8.makeIterator()
        for expected in "https://".utf8 {
            guard let c = utf8.next() else { return false }
            // ASCII letters only: "https://" has no other bytes a case fold changes.
            let folded = c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c
            guard folded == expected else { return false }
        }
        return true
    }

    static func milliseconds(_ seconds: Double) -> Int {
        Int(min(max(seconds * 1000, 1), Double(Int32.max)).rounded())
    }

    /// The write callback's work: bytes of the final response's body.
    /// Returning less than `count` makes curl abort with CURLE_WRITE_ERROR.
    func receive(_ data: UnsafeMutablePointer<CChar>?, count: Int) -> Int {
        if let bandwidth, !bandwidth.traffic.receive(bytes: count, now: CurlEventLoop.seconds()) {
            // curl keeps the bytes and hands them over again on resume.
            bandwidth.paused.append(self)
            return imgwarm_writefunc_pause()
        }
        var status = 0
        imgwarm_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if status != bodyStatus {
            bodyStatus = status
            received = 0
            body = []
            keepBody = (200..<300).contains(status)
            var length: curl_off_t = -1
            imgwarm_easy_getinfo_off(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            if keepBody, length > 0 { body.reserveCapacity(Int(min(curl_off_t(maxBodyBytes), length))) }
        }
        received += count
        guard keepBody else {
            if received > Self.errorBodyLimit {
                errorBodyDropped = true
                return 0
            }
            return count
        }
        if received > maxBodyBytes {
            // Too large: stop now, and keep none of it.
            bodyLimitHit = true
            body = []
            return 0
        }
        if count > 0, let data {
            data.withMemoryRebound(to: UInt8.self, capacity: count) {
                body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
            }
        }
        return count
    }

    /// Reads the attempt's result; call once, after curl reported it done and
    /// before the handle is reset. Moves the body out of the transfer.
    func finish(code: CURLcode) -> AttemptOutcome {
        var status = 0
        imgwarm_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        let detailText = String(cString: errorBuffer)
        let facts = AttemptClassifier.Facts(
            code: code, status: status, bodyLimitHit: bodyLimitHit, errorBodyDropped: errorBodyDropped,
            conditional: job.validators != nil, maxBodyBytes: maxBodyBytes,
            detail: detailText.isEmpty ? String(cString: curl_easy_strerror(code)) : detailText)
        let verdict = AttemptClassifier.verdict(facts)
        switch verdict {
        case .success, .notModified:
            let response = DownloadResponse(
                status: status,
                body: verdict == .success ? takeBody() : [],
                etag: header("ETag"),
                lastModified: header("Last-Modified"),
                contentType: stringInfo(CURLINFO_CONTENT_TYPE),
                vary: header("Vary"),
                effectiveURL: stringInfo(CURLINFO_EFFECTIVE_URL).map(Redaction.url))
            body = []
            return verdict == .success ? .success(response) : .notModified(response)
        case .failure(let errorClass, let transient):
            body = []
            return .failure(AttemptFailure(
                errorClass: errorClass, status: status > 0 ? status : nil,
                message: AttemptClassifier.message(facts),
                isTransient: transient,
                retryAfter: transient ? header("Retry-After").flatMap { RetryPolicy.parseRetryAfter($0) } : nil,
                contentType: status > 0 ? stringInfo(CURLINFO_CONTENT_TYPE) : nil))
        }
    }

    /// Seconds from the request sent to its first response byte; nil when
    /// no response came. The adaptive limit's latency sample.
    func firstByteLatency() -> Double? {
        var pre: curl_off_t = 0, first: curl_off_t = 0
        guard imgwarm_easy_getinfo_off(handle, CURLINFO_PRETRANSFER_TIME_T, &pre) == CURLE_OK,
              imgwarm_easy_getinfo_off(handle, CURLINFO_STARTTRANSFER_TIME_T, &first) == CURLE_OK,
              first > 0, first >= pre else { return nil }
        return Double(first - pre) / 1e6
    }

    /// Whether the last response came over HTTP/1.x (not 2 or 3).
    func wasHTTP1() -> Bool {
        var version = 0
        imgwarm_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        return version == Int(CURL_HTTP_VERSION_1_0) || version == Int(CURL_HTTP_VERSION_1_1)
    }

    private func takeBody() -> [UInt8] {
        let b = body
        body = []
        return b
    }

    private func header(_ name: String) -> String? {
        imgwarm_easy_header_value(handle, name).map { String(cString: $0) }
    }

    private func stringInfo(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard imgwarm_easy_getinfo_str(handle, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

/// CURLOPT_WRITEFUNCTION: captures nothing, so it converts to a C function
/// pointer; the transfer comes back through CURLOPT_WRITEDATA.
private let curlTransferWrite: imgwarm_curl_data_cb = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receive(data, count: size * count)
}

/// The request header lines of a configuration, and their curl_slist built
/// once for every transfer that adds none (the engine's own: one per
/// event loop). Built per transfer before, the name set, the lowercasing and
/// the list's allocations came to about 1,500 instructions a file.
final class RequestHeaders {
    let lines: [String]
    let shared: UnsafeMutablePointer<curl_slist>?

    init(config: DownloaderConfiguration) {
        var lines: [String] = []
        let names = Set(config.headers.map { $0.prefix { $0 != ":" }.trimmingCharacters(in: .whitespaces).lowercased() })
        if !names.contains("accept") { lines.append("Accept: image/*,*/*;q=0.8") }
        lines += config.headers
        self.lines = lines
        shared = Self.list(lines)
    }

    deinit { curl_slist_free_all(shared) }

    /// `If-None-Match` and `If-Modified-Since` for a revalidation.
    static func conditionalLines(_ validators: HTTPValidators) -> [String] {
        var lines: [String] = []
        if let etag = validators.etag { lines.append("If-None-Match: \(etag)") }
        if let date = validators.lastModified { lines.append("If-Modified-Since: \(date)") }
        return lines
    }

    static func list(_ lines: [String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            // curl_slist_append copies the string; on failure keep the list.
            if let next = curl_slist_append(list, line) { list = next }
        }
        return list
    }
}
