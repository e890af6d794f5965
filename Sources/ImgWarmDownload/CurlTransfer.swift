import CCurl
import Foundation
import ImgWarmSupport

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
    /// A gzip or deflate body is inflated here, not by libcurl
    /// (`imgwarm_inflater_new` says why), through a scratch buffer.
    private var inflater: UnsafeMutablePointer<z_stream>?
    private var inflateEnded = false
    private var inflateScratch: UnsafeMutablePointer<UInt8>?
    private static let inflateChunk = 64 << 10
    /// deflate expands at most 1032:1 (zlib's FAQ): the memory a wire chunk
    /// may inflate to, charged before any of it is consumed.
    private static let inflateRatio = 1032
    /// Why the body's content encoding could not be decoded.
    private var decodingFailure: String?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The headers `finish` keeps, as they arrive (`imgwarm_kept_headers`).
    private let keptHeaders: UnsafeMutablePointer<imgwarm_kept_headers>

    /// The header lists of the configuration, per origin.
    private let headers: RequestHeaders
    /// Monotonic seconds when the attempt started (a 429 to a request
    /// started before the host's last rate cut does not cut again).
    let startedSeconds: Double
    /// With --limit-rate: the shared byte bucket, and the engine thread's
    /// list of transfers paused for want of bytes.
    private let bandwidth: Bandwidth?
    /// The URL of the request in flight (the job's, or a redirect's).
    private(set) var currentURL: String
    /// Redirects followed in this attempt (`RedirectRule`).
    private(set) var redirectsFollowed = 0
    /// When this attempt started (its timeout covers every hop).
    private let startedAt = CurlEventLoop.now()
    /// `DownloaderConfiguration.recordsResponseDetail`.
    private var recordsDetail = false
    /// The TLS session of the response whose body is arriving.
    private var tls: TLSFacts?

    /// Nanoseconds the attempt waited off the network for a local limit
    /// (a redirect hop's host rate): not the server's time, so not counted
    /// toward `--timeout`.
    private var waitedLocally: UInt64 = 0

    /// Time spent waiting for a local limit, kept out of the timeout.
    func waited(nanoseconds: UInt64) { waitedLocally += nanoseconds }

    /// `--memory`: this attempt's share of the bodies' budget, and the
    /// engine thread's list of transfers paused for want of it.
    private let charge: BodyMemory.Charge?
    private let memoryPauses: MemoryPauses?
    /// Where a body past the threshold goes (`BodySpill`), its file once
    /// opened, and whether the body lives there (`spilling`; a compressed
    /// body's file is opened before a chunk that may inflate past the
    /// threshold, and used only if it does).
    private let spill: BodySpill?
    private var spillFD: Int32 = -1
    private var spilling = false
    private var spilledBytes = 0
    /// No file could be opened for this attempt: the body stays in memory.
    private var spillRefused = false
    /// Why the spill file could not be written (the entry fails with it,
    /// as a disk error), and its errno.
    private var spillFailure: String?
    private var spillErrno: Int32 = 0
    /// --limit-rate: bytes of the chunk curl holds that were already taken
    /// from the bucket (a pause for memory hands them over again).
    private var prepaid = PrepaidBytes()
    /// The timeout of the request in flight, milliseconds (a pause for
    /// memory lengthens it by the time paused: a local wait, not the
    /// server's).
    private var requestTimeoutMs = 0
    private var memoryPausedAt: UInt64?

    /// Transfers of one engine thread paused by `BodyMemory`.
    final class MemoryPauses {
        var paused: [CurlTransfer] = []
    }

    /// Whether a transfer paused for memory may go on now.
    var mayResumeForMemory: Bool { charge?.mayGrow ?? true }

    /// Before resuming a transfer paused for memory: the time paused goes
    /// onto its timeout.
    func resumingAfterMemoryPause() {
        guard let at = memoryPausedAt else { return }
        memoryPausedAt = nil
        let paused = CurlEventLoop.now() - at
        waitedLocally += paused
        requestTimeoutMs += Int(paused / 1_000_000)
        imgwarm_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, requestTimeoutMs)
    }

    /// --limit-rate's parts on one engine thread.
    final class Bandwidth {
        let traffic: HostTraffic
        var paused: [CurlTransfer] = []
        init(traffic: HostTraffic) { self.traffic = traffic }
    }

    init(job: DownloadJob, handle: UnsafeMutableRawPointer, maxBodyBytes: Int, headers: RequestHeaders,
         startedSeconds: Double, bandwidth: Bandwidth?, memory: BodyMemory? = nil, memoryPauses: MemoryPauses? = nil,
         spill: BodySpill? = nil) {
        self.job = job
        self.spill = spill
        charge = memory?.charge()
        self.memoryPauses = memory == nil ? nil : memoryPauses
        self.handle = handle
        self.maxBodyBytes = maxBodyBytes
        self.headers = headers
        self.startedSeconds = startedSeconds
        self.bandwidth = bandwidth
        currentURL = job.url
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        keptHeaders = .allocate(capacity: 1)
        keptHeaders.initialize(to: imgwarm_kept_headers())
    }

    deinit {
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        imgwarm_kept_headers_clear(keptHeaders)
        keptHeaders.deallocate()
        imgwarm_inflater_free(inflater)
        inflateScratch?.deallocate()
        if spillFD >= 0 { close(spillFD) }
    }

    /// The spill file, opened once per attempt; false when none can be.
    private func openSpillFile() -> Bool {
        if spillFD >= 0 { return true }
        guard let spill, !spillRefused, let fd = spill.open() else {
            spillRefused = true
            return false
        }
        spillFD = fd
        return true
    }

    /// Moves the body into its file; from now on chunks are appended there.
    /// On a disk the body's memory charge is released; on tmpfs it stays
    /// (the file is memory). False when no file could be opened (the body
    /// stays in memory); a failed write sets `spillFailure`.
    private func startSpill() -> Bool {
        guard let spill, !spilling, openSpillFile() else { return false }
        let e = body.withUnsafeBytes { BodySpill.write(spillFD, $0) }
        if e != 0 {
            failSpill(e)
            return true
        }
        spilling = true
        spilledBytes = body.count
        body = []
        if !spill.chargesSpilledBytes { charge?.reset() }
        return true
    }

    /// Appends a chunk to the spill file; false (and `spillFailure`) when
    /// it cannot be written.
    private func appendToSpill(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let e = BodySpill.write(spillFD, bytes)
        if e != 0 {
            failSpill(e)
            return false
        }
        spilledBytes += bytes.count
        return true
    }

    private func failSpill(_ e: Int32) {
        spillFailure = "cannot write the body to \(spill?.path ?? "the temp folder"): \(errnoString(e))"
        spillErrno = e
        discardSpill()
        body = []
        charge?.reset()
    }

    /// The spill file of a body that is dropped (a redirect, an error, too large).
    private func discardSpill() {
        if spillFD >= 0 { close(spillFD) }
        spillFD = -1
        spilling = false
        spilledBytes = 0
    }

    private func dropInflater() {
        imgwarm_inflater_free(inflater)
        inflater = nil
        inflateEnded = false
        decodingFailure = nil
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
            // Redirects are followed here, a hop at a time (RedirectRule):
            // libcurl would send every custom header to every host.
            imgwarm_easy_setopt_long(h, CURLOPT_FOLLOWLOCATION, 0)
            // Nothing but http(s), also after a redirect (no file://, ftp://...).
            imgwarm_easy_setopt_str(h, CURLOPT_PROTOCOLS_STR, "http,https")
            imgwarm_easy_setopt_str(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
            // gzip and deflate, inflated by the write callback under the
            // memory budget (`inflate(_:count:with:)`), not by libcurl;
            // another encoding a server sends unasked fails the entry.
            imgwarm_easy_setopt_str(h, CURLOPT_ACCEPT_ENCODING, "gzip, deflate")
            imgwarm_easy_setopt_long(h, CURLOPT_HTTP_CONTENT_DECODING, 0)
            imgwarm_easy_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(config.connectTimeout))
            imgwarm_easy_setopt_long(h, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            imgwarm_easy_setopt_long(h, CURLOPT_SSL_VERIFYPEER, config.insecure ? 0 : 1)
            imgwarm_easy_setopt_long(h, CURLOPT_SSL_VERIFYHOST, config.insecure ? 0 : 2)
            imgwarm_easy_setopt_str(h, CURLOPT_USERAGENT, config.userAgent)
            // Set on every handle, so every redirect hop (a handle of its
            // own) goes through the same proxy and trusts the same CAs.
            if let caFile = config.caFile { imgwarm_easy_setopt_str(h, CURLOPT_CAINFO, caFile) }
            if let caPath = config.caPath { imgwarm_easy_setopt_str(h, CURLOPT_CAPATH, caPath) }
            if let proxy = config.proxy { imgwarm_easy_setopt_str(h, CURLOPT_PROXY, proxy) }
            if let noProxy = config.noProxy { imgwarm_easy_setopt_str(h, CURLOPT_NOPROXY, noProxy) }
            // libcurl looks the machine up for each hop's own host: a
            // redirect to another host never carries these credentials.
            switch config.netrc {
            case .ignored: break
            case .optional: imgwarm_easy_setopt_long(h, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue))
            case .required: imgwarm_easy_setopt_long(h, CURLOPT_NETRC, Int(CURL_NETRC_REQUIRED.rawValue))
            }
            if let netrcFile = config.netrcFile { imgwarm_easy_setopt_str(h, CURLOPT_NETRC_FILE, netrcFile) }
            // MAXFILESIZE 0 means "no limit" to curl; the write callback covers 0.
            if maxBodyBytes > 0 {
                imgwarm_easy_setopt_off(h, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBodyBytes))
            }
            imgwarm_easy_setopt_datacb(h, CURLOPT_WRITEFUNCTION, curlTransferWrite)
            imgwarm_easy_keep_headers(h)
        }
        recordsDetail = config.recordsResponseDetail
        // Every time: a redirect shortens it on this handle (`follow`).
        requestTimeoutMs = Self.milliseconds(config.timeout)
        imgwarm_easy_setopt_long(h, CURLOPT_TIMEOUT_MS, requestTimeoutMs)
        imgwarm_easy_setopt_ptr(h, CURLOPT_ERRORBUFFER, errorBuffer)
        imgwarm_easy_setopt_ptr(h, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
        imgwarm_easy_setopt_ptr(h, CURLOPT_HEADERDATA, keptHeaders)
        setRequest(url: job.url, origin: headers.needsOrigin ? job.hostKey.text : nil, isEntryOrigin: true)
    }

    /// The URL and the headers of one request of the attempt.
    private func setRequest(url: String, origin: String?, isEntryOrigin: Bool) {
        let h = handle
        currentURL = url
        // The string's own bytes (curl copies them): passing the String
        // itself made a C copy of it first.
        let https = url.withCString { cURL in
            imgwarm_easy_setopt_str(h, CURLOPT_URL, cURL)
            return UnsafeRawPointer(cURL).withMemoryRebound(to: UInt8.self, capacity: 1) {
                Self.isHTTPS(UnsafeBufferPointer(start: $0, count: strlen(cURL)))
            }
        }
        // Wait for a connection that can multiplex rather than open another.
        // Only over https: HTTP/2 comes from ALPN, so a cleartext connection
        // never multiplexes, and PIPEWAIT would make every new transfer to a
        // host wait for the first response from it.
        imgwarm_easy_setopt_long(h, CURLOPT_PIPEWAIT, https ? 1 : 0)
        // A request without validators sends a shared list (curl reads it,
        // never changes or frees it); one with validators its own.
        curl_slist_free_all(headerList)
        headerList = nil
        let lines = headers.lines(origin: origin, isEntryOrigin: isEntryOrigin)
        if let validators = job.validators {
            headerList = RequestHeaders.list(lines.lines + RequestHeaders.conditionalLines(validators))
            imgwarm_easy_setopt_slist(h, CURLOPT_HTTPHEADER, headerList)
        } else {
            imgwarm_easy_setopt_slist(h, CURLOPT_HTTPHEADER, lines.shared)
        }
    }

    /// After curl finished a request of this attempt: whether it was a
    /// redirect to follow or to refuse (`RedirectRule`); nil otherwise.
    func redirect(code: CURLcode, allowHTTPRedirect: Bool) -> RedirectRule.Decision? {
        guard code == CURLE_OK else { return nil }
        var status = 0
        imgwarm_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        guard RedirectRule.isRedirect(status) else { return nil }
        return RedirectRule.decide(RedirectRule.Hop(
            status: status, location: header("Location"), resolved: stringInfo(CURLINFO_REDIRECT_URL),
            current: currentURL, entry: job.url, followed: redirectsFollowed, allowHTTPRedirect: allowHTTPRedirect))
    }

    /// Points the handle at the next hop: the body of the redirect is
    /// forgotten, the headers are those of the new origin, and the time
    /// left of the attempt's timeout carries over. The caller removes the
    /// handle from the multi handle before and adds it after.
    func follow(_ url: String, config: DownloaderConfiguration) {
        redirectsFollowed += 1
        body = []
        dropInflater()
        charge?.reset()
        received = 0
        bodyStatus = 0
        keepBody = false
        bodyLimitHit = false
        errorBodyDropped = false
        errorBuffer[0] = 0
        let origin = ParsedURL.hostKey(of: url)
        let spent = Double(CurlEventLoop.now() - startedAt - min(waitedLocally, CurlEventLoop.now() - startedAt)) / 1e9
        requestTimeoutMs = Self.milliseconds(max(config.timeout - spent, 0.001))
        imgwarm_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, requestTimeoutMs)
        setRequest(url: url, origin: origin, isEntryOrigin: origin == job.hostKey.text)
    }

    /// Whether the URL's scheme is https (any case), from its bytes.
    static func isHTTPS(_ url: String) -> Bool {
        url.utf8.withContiguousStorageIfAvailable { isHTTPS($0) } ?? isHTTPS(Array(url.utf8))
    }

    private static func isHTTPS<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> Bool
        where Bytes.Element == UInt8, Bytes.Index == Int {
        let prefix: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0x68, 0x74, 0x74, 0x70, 0x73, 0x3A, 0x2F, 0x2F)  // "https://"
        guard bytes.count >= 8 else { return false }
        return withUnsafeBytes(of: prefix) { expected in
            for i in 0..<8 {
                let c = bytes[bytes.startIndex + i]
                // ASCII letters only: "https://" has no other bytes a case fold changes.
                let folded = c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c
                guard folded == expected[i] else { return false }
            }
            return true
        }
    }

    static func milliseconds(_ seconds: Double) -> Int {
        Int(min(max(seconds * 1000, 1), Double(Int32.max)).rounded())
    }

    /// The write callback's work: bytes of the final response's body.
    /// Returning less than `count` makes curl abort with CURLE_WRITE_ERROR.
    func receive(_ data: UnsafeMutablePointer<CChar>?, count: Int) -> Int {
        guard let bandwidth else { return receiveBody(data, count: count) }
        // Only bytes not taken before: a chunk handed over again after a
        // pause for memory was paid for the first time.
        let due = prepaid.due(count)
        if due > 0, !bandwidth.traffic.receive(bytes: due, now: CurlEventLoop.seconds()) {
            // curl keeps the bytes and hands them over again on resume.
            bandwidth.paused.append(self)
            return imgwarm_writefunc_pause()
        }
        let taken = receiveBody(data, count: count)
        prepaid.delivered(count, consumed: taken == count)
        return taken
    }

    private func receiveBody(_ data: UnsafeMutablePointer<CChar>?, count: Int) -> Int {
        var status = 0
        imgwarm_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if status != bodyStatus {
            bodyStatus = status
            received = 0
            body = []
            discardSpill()
            spillRefused = false
            charge?.reset()
            dropInflater()
            keepBody = (200..<300).contains(status)
            // The connection is attached only while the transfer runs.
            tls = keepBody && recordsDetail && Self.isHTTPS(currentURL) ? sessionFacts() : nil
            var length: curl_off_t = -1
            imgwarm_easy_getinfo_off(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            if keepBody, let encoding = kept(Self.keptContentEncoding)?.trimmingCharacters(in: .whitespaces).lowercased(),
               !encoding.isEmpty, encoding != "identity" {
                guard ["gzip", "x-gzip", "deflate"].contains(encoding) else {
                    decodingFailure = "the body's content encoding \(encoding.prefix(32)) was not asked for (gzip and deflate were)"
                    return 0
                }
                inflater = imgwarm_inflater_new()
                if inflater == nil {
                    decodingFailure = "cannot start inflating the \(encoding) body"
                    return 0
                }
            }
            if keepBody, inflater == nil, length > 0 {
                let capacity = Int(min(curl_off_t(maxBodyBytes), length))
                if let spill, length <= maxBodyBytes,
                   SpillRule.spills(held: 0, incoming: 0, expected: capacity, threshold: spill.threshold), startSpill() {
                    // Known to be large: straight to its file.
                    if spillFailure != nil { return 0 }
                } else {
                    // Without room in the budget the buffer grows as bytes come.
                    _ = reserveBody(to: capacity)
                }
            }
        }
        if keepBody, let inflater { return inflate(data, count: count, with: inflater) }
        if keepBody, !spilling, let spill, received + count <= maxBodyBytes,
           SpillRule.spills(held: body.count, incoming: count, expected: nil, threshold: spill.threshold) {
            _ = startSpill()
            if spillFailure != nil { return 0 }
        }
        if keepBody, spilling, received + count <= maxBodyBytes {
            // On tmpfs the file is memory: charged as the buffer would be.
            if !reserveSpilled(adding: count) { return pauseForMemory() }
        } else if keepBody, body.count + count > body.capacity, received + count <= maxBodyBytes,
                  !reserveBody(to: min(max(body.count + count, body.capacity * 2), maxBodyBytes)) {
            // --memory: the buffer's growth is charged before it happens; when
            // it does not fit, curl keeps these bytes and hands them over again
            // on resume (nothing is counted as received yet).
            return pauseForMemory()
        }
        received += count
        guard keepBody else {
            if received > Self.errorBodyLimit {
                errorBodyDropped = true
                return 0
            }
            return count
        }
        guard count > 0, let data else { return count }
        return appendBody(UnsafeRawBufferPointer(start: data, count: count)) ? count : 0
    }

    /// The one way the body's memory grows, as received or as inflated: the
    /// buffer grown to `capacity`, charged to --memory before it grows.
    /// False when the budget has no room now (nothing is reserved).
    private func reserveBody(to capacity: Int) -> Bool {
        guard capacity > body.capacity else { return true }
        if let charge, !charge.grow(to: capacity) { return false }
        body.reserveCapacity(capacity)
        return true
    }

    /// A spilled body's next `count` bytes: on tmpfs the file is memory,
    /// charged as the buffer would be; on a disk nothing is charged.
    private func reserveSpilled(adding count: Int) -> Bool {
        guard let charge, spill?.chargesSpilledBytes == true else { return true }
        return charge.grow(to: spilledBytes + count)
    }

    /// The one way bytes enter the body, as received or as inflated: into
    /// the buffer, or into the spill file once the body has spilled. False
    /// when the body would pass --max-bytes (it stops now and keeps none of
    /// it) or its file cannot be written (`spillFailure`).
    private func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if (spilling ? spilledBytes : body.count) + bytes.count > maxBodyBytes {
            bodyLimitHit = true
            body = []
            discardSpill()
            charge?.reset()
            return false
        }
        if spilling { return appendToSpill(bytes) }
        body.append(contentsOf: bytes)
        return true
    }

    private func pauseForMemory() -> Int {
        if memoryPausedAt == nil {
            memoryPausedAt = CurlEventLoop.now()
            charge?.paused()
        }
        memoryPauses?.paused.append(self)
        return imgwarm_writefunc_pause()
    }

    /// A chunk of a gzip or deflate body. What it may inflate to (at most
    /// `inflateRatio` times its size, and no more than `--max-bytes` allows)
    /// is charged before any of it is consumed: a transfer that must wait
    /// for memory pauses with only these compressed bytes held by libcurl.
    private func inflate(_ data: UnsafeMutablePointer<CChar>?, count: Int, with z: UnsafeMutablePointer<z_stream>) -> Int {
        guard count > 0, let data, !inflateEnded else { return count }
        let held = spilling ? spilledBytes : body.count
        let room = maxBodyBytes - held
        let (scaled, overflow) = count.multipliedReportingOverflow(by: Self.inflateRatio)
        let worst = min(overflow ? Int.max - 64 : scaled + 64, room + 1)
        if spilling {
            // On a disk the output streams through the scratch buffer into
            // the file; on tmpfs the file is memory, charged as a buffer.
            if !reserveSpilled(adding: worst) { return pauseForMemory() }
        } else {
            var needed = body.count + worst
            // A chunk that may inflate past the threshold: its file is
            // opened now and the body moves there when it does, so memory
            // holds at most the threshold and one scratch buffer more (on
            // a disk; on tmpfs the file is charged the same).
            if let spill, !spill.chargesSpilledBytes, needed > spill.threshold, openSpillFile() {
                needed = min(needed, spill.threshold + Self.inflateChunk)
            }
            if !reserveBody(to: needed) { return pauseForMemory() }
        }
        let scratch = inflateScratch ?? UnsafeMutablePointer<UInt8>.allocate(capacity: Self.inflateChunk)
        inflateScratch = scratch
        var offset = 0
        while true {
            var consumed = 0
            var produced = 0
            let r = data.withMemoryRebound(to: UInt8.self, capacity: count) {
                imgwarm_inflate(z, $0 + offset, count - offset, &consumed, scratch, Self.inflateChunk, &produced)
            }
            offset += consumed
            if produced > 0 {
                if !spilling, spillFD >= 0, let spill, body.count + produced > spill.threshold {
                    _ = startSpill()
                    if spillFailure != nil { return 0 }
                }
                if !appendBody(UnsafeRawBufferPointer(start: scratch, count: produced)) { return 0 }
            }
            if r == Z_STREAM_END {
                // What follows the stream's end is not the image.
                inflateEnded = true
                break
            }
            if r != Z_OK && r != Z_BUF_ERROR {
                decodingFailure = "the body is not valid gzip or deflate data (zlib \(r))"
                return 0
            }
            // All input taken and the output not full: nothing is pending.
            if offset >= count && produced < Self.inflateChunk { break }
            if consumed == 0 && produced == 0 { break }
        }
        return count
    }

    /// Reads the attempt's result; call once, after curl reported it done and
    /// before the handle is reset. Moves the body out of the transfer.
    func finish(code curlCode: CURLcode) -> AttemptOutcome {
        var status = 0
        imgwarm_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        // A body the callback could not inflate or write: curl saw a write error.
        let code = decodingFailure != nil ? CURLE_BAD_CONTENT_ENCODING : spillFailure != nil ? CURLE_WRITE_ERROR : curlCode
        let detailText = decodingFailure ?? spillFailure ?? String(cString: errorBuffer)
        let facts = AttemptClassifier.Facts(
            code: code, status: status, bodyLimitHit: bodyLimitHit, errorBodyDropped: errorBodyDropped,
            conditional: job.validators != nil, maxBodyBytes: maxBodyBytes,
            detail: detailText.isEmpty ? String(cString: curl_easy_strerror(code)) : detailText)
        let verdict = AttemptClassifier.verdict(facts)
        if decodingFailure == nil, let spillFailure {
            // The body's file could not be written: the cache's filesystem
            // (`.imgwarm/tmp` is in it) is full or unusable, not the network.
            discardSpill()
            body = []
            charge?.reset()
            return .failure(AttemptFailure(
                errorClass: .disk, status: status > 0 ? status : nil, message: spillFailure, isTransient: false,
                retryAfter: nil, contentType: stringInfo(CURLINFO_CONTENT_TYPE),
                diskError: .cache(path: spill?.path ?? "", reason: spillFailure, errno: spillErrno)))
        }
        var spilledBody: SpilledBody?
        if verdict == .success, spilling, spilledBytes > 0 {
            let fd = spillFD
            spillFD = -1
            switch SpilledBody.map(fd: fd, count: spilledBytes) {
            case .success(let mapped):
                spilledBody = mapped
                spill?.received(mapped.count)
            case .failure(let error):
                discardSpill()
                charge?.reset()
                let message = "cannot map the spilled body: \(errnoString(error.errno))"
                return .failure(AttemptFailure(
                    errorClass: .disk, status: status, message: message,
                    isTransient: false, retryAfter: nil, contentType: stringInfo(CURLINFO_CONTENT_TYPE),
                    diskError: .cache(path: spill?.path ?? "", reason: message, errno: error.errno)))
            }
        }
        discardSpill()
        switch verdict {
        case .success, .notModified:
            var response = DownloadResponse(
                status: status,
                body: verdict == .success ? takeBody() : [],
                etag: kept(0),
                lastModified: kept(1),
                contentType: stringInfo(CURLINFO_CONTENT_TYPE),
                vary: kept(2),
                effectiveURL: stringInfo(CURLINFO_EFFECTIVE_URL).map(Redaction.url))
            response.spilled = spilledBody
            body = []
            // The body's share of --memory goes with it.
            response.bodyCharge = verdict == .success ? charge : nil
            response.cacheControl = kept(3)
            response.expires = kept(4)
            response.date = kept(5)
            response.age = kept(6)
            if recordsDetail {
                response.headerFields = headerFields()
                var version = 0
                imgwarm_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
                response.httpVersion = version == Int(CURL_HTTP_VERSION_1_0) ? 10
                    : version == Int(CURL_HTTP_VERSION_1_1) ? 11 : version == Int(CURL_HTTP_VERSION_2_0) ? 2
                    : version == Int(CURL_HTTP_VERSION_3) ? 3 : 0
                response.tls = tls
            }
            tls = nil
            return verdict == .success ? .success(response) : .notModified(response)
        case .failure(let errorClass, let transient):
            body = []
            charge?.reset()
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

    /// Every header of the last response, in order (not trailers).
    private func headerFields() -> [HeaderField] {
        var fields: [HeaderField] = []
        var previous: UnsafeMutablePointer<curl_header>?
        while let h = curl_easy_nextheader(handle, UInt32(CURLH_HEADER), -1, previous) {
            previous = h
            guard let name = h.pointee.name, let value = h.pointee.value else { continue }
            fields.append(HeaderField(String(cString: name), String(cString: value)))
        }
        return fields
    }

    /// The TLS session of the connection, from OpenSSL; nil with another
    /// TLS library (OkHttp's entry then records no handshake).
    private func sessionFacts() -> TLSFacts? {
        guard let cipher = imgwarm_tls_cipher_name(handle), let version = imgwarm_tls_version_name(handle) else { return nil }
        var certificates: [[UInt8]] = []
        let count = imgwarm_tls_peer_cert_count(handle)
        for i in 0..<max(0, count) {
            var der: UnsafeMutablePointer<UInt8>?
            let length = imgwarm_tls_peer_cert_der(handle, Int32(i), &der)
            defer { imgwarm_tls_free(der) }
            guard length > 0, let der else { return TLSFacts(cipherSuite: String(cString: cipher), version: String(cString: version), peerCertificates: []) }
            certificates.append(Array(UnsafeBufferPointer(start: der, count: Int(length))))
        }
        return TLSFacts(cipherSuite: String(cString: cipher), version: String(cString: version), peerCertificates: certificates)
    }

    private func takeBody() -> [UInt8] {
        let b = body
        body = []
        return b
    }

    /// The index of Content-Encoding in `imgwarm_kept_names`.
    private static let keptContentEncoding: Int32 = 7

    /// Header `index` of `imgwarm_kept_names` of the last response.
    private func kept(_ index: Int32) -> String? {
        imgwarm_kept_header(keptHeaders, index).map { String(cString: $0) }
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

/// The request header lists of a configuration (`RequestHeaderRules`), one
/// curl_slist per distinct set of lines, built once per event loop: the
/// engine's own lines (a default Accept), plus `--header` lines for a
/// request to the entry URL's origin, plus the `--header-for` lines of the
/// request's host. Without `--header-for`, two lists serve every request;
/// with it, one more per origin a rule names. Built per transfer before,
/// the name set, the lowercasing and the list's allocations came to about
/// 1,500 instructions a file.
final class RequestHeaders {
    struct Lines {
        let lines: [String]
        let shared: UnsafeMutablePointer<curl_slist>?
    }

    private let rules: RequestHeaderRules
    private let entryOrigin: Lines
    private let otherOrigin: Lines
    /// Lists of origins that `--header-for` names, keyed by entry-origin
    /// flag and origin. Lives on the engine thread only.
    private var scoped: [String: Lines] = [:]
    /// Origins already checked for a bare rule's host over http.
    private var checkedOrigins: Set<String> = []
    private let onWarning: (@Sendable (String) -> Void)?

    init(config: DownloaderConfiguration) {
        rules = config.headerRules
        onWarning = config.onWarning
        entryOrigin = Self.make(rules.entryOriginLines)
        otherOrigin = Self.make([])
    }

    deinit {
        curl_slist_free_all(entryOrigin.shared)
        curl_slist_free_all(otherOrigin.shared)
        for l in scoped.values { curl_slist_free_all(l.shared) }
    }

    /// Whether a request's origin matters: only `--header-for` rules look
    /// at it (the entry's own origin is known without parsing).
    var needsOrigin: Bool { !rules.scoped.isEmpty }

    /// The lines for a request to `origin` (a `ParsedURL.hostKey`; nil when
    /// no rule needs it).
    func lines(origin: String?, isEntryOrigin: Bool) -> Lines {
        if let origin, checkedOrigins.insert(origin).inserted {
            for rule in rules.schemeMismatches(origin: origin) {
                onWarning?(RequestHeaderRules.schemeMismatchWarning(rule: rule))
            }
        }
        if let origin, rules.hasScopedLines(origin: origin) {
            let key = (isEntryOrigin ? "e " : "o ") + origin
            if let l = scoped[key] { return l }
            let l = Self.make(rules.lines(origin: origin, isEntryOrigin: isEntryOrigin))
            scoped[key] = l
            return l
        }
        return isEntryOrigin ? entryOrigin : otherOrigin
    }

    /// The engine's Accept unless the user's lines name one.
    private static func make(_ userLines: [String]) -> Lines {
        var lines: [String] = []
        let names = Set(userLines.map { $0.prefix { $0 != ":" }.trimmingCharacters(in: .whitespaces).lowercased() })
        if !names.contains("accept") { lines.append("Accept: image/*,*/*;q=0.8") }
        lines += userLines
        return Lines(lines: lines, shared: list(lines))
    }

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
