// A real HTTP/1.1 server on 127.0.0.1 (ephemeral port) for tests: it serves
// files registered with `setFile` and misbehaves on request, so the download
// engine and the end-to-end tests run against real sockets, not mocks.
//
// Routes (selected by path; `REST` is another route, tried after the prefix,
// e.g. `/slow/200/flaky/1/img/a.png`; an empty REST answers 200 "ok"):
//   /any/registered/path       a file from setFile: 200 with Content-Type,
//                              Content-Length, ETag and Last-Modified when
//                              given; 304 when If-None-Match matches the ETag
//                              (or is *) or If-Modified-Since equals
//                              Last-Modified.
//   /status/{code}             that status with a small text body that
//                              contains "FAILED-RESPONSE-BODY" (3xx: no
//                              Location).
//   /slow/{ms}/REST            waits ms milliseconds, then REST.
//   /flaky/{n}/REST            500 for the first n requests to this exact
//                              path, then REST.
//   /retry-after/{s}/{n}/REST  503 with `Retry-After: s` (seconds) for the
//                              first n requests to this exact path, then REST.
//   /retry-after-date/{s}/{n}/REST  the same with an HTTP-date Retry-After.
//   /too-many/{s}/{n}/REST     429 with `Retry-After: s` for the first n
//                              requests to this exact path, then REST.
//   /throttle/{n}/REST         an origin's rate limit: a token bucket of n
//                              requests a second (burst n/10, at least 1)
//                              shared by every /throttle/{n} path; a request
//                              finding it empty gets 429 with Retry-After: 1,
//                              else REST.
//   /redirect/{n}/REST         302 (with a small HTML body) to
//                              /redirect/{n-1}/REST; n = 0 is REST.
//   /loop                      302 to itself, forever.
//   /redirect-to?url=URL       302 to URL (percent-decoded), e.g. file:///etc/passwd.
//   /redirect-nolocation       302 without a Location header.
//   /reset                     headers with Content-Length 100000, 1000 bytes,
//                              then a TCP reset (SO_LINGER 0).
//   /truncate                  Content-Length 100000, 1000 bytes, then a clean close.
//   /empty-reply               closes the connection without any response.
//   /huge/{bytes}              a body of that size streamed chunked, with no
//                              Content-Length (backpressured, never buffered);
//                              `?status=N` sends status N instead of 200.
//   /huge-length/{bytes}       the same with a Content-Length.
//   /gzip/REST                 REST's body gzip-compressed (stored deflate
//                              blocks), Content-Encoding: gzip.
//   /html                      200 text/html page (not an image).
//   /echo-headers              200 text/plain, the request headers, one
//                              `name: value` a line, names lowercased.
//   anything else              404.
//
// Counters: requests per path (query excluded), total, requests open at once
// (from request head to response end or connection close) and the largest
// such count, the order in which request heads arrived and when (monotonic
// seconds), connections open at once and the largest such count, and the
// 429s the /throttle route sent.

import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

public final class TestHTTPServer: @unchecked Sendable {
    public struct ServedFile: Sendable {
        public var bytes: [UInt8]
        public var contentType: String
        public var etag: String?
        public var lastModified: String?
        public var vary: String? = nil
        public var cacheControl: String? = nil
    }

    public let port: Int
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    private let group: MultiThreadedEventLoopGroup
    private let channel: Channel
    let state: ServerState
    private let shutdownLock = NSLock()
    private var isShutDown = false

    private init(group: MultiThreadedEventLoopGroup, channel: Channel, state: ServerState, port: Int) {
        self.group = group
        self.channel = channel
        self.state = state
        self.port = port
    }

    /// Binds 127.0.0.1 on an ephemeral port.
    public static func start() throws -> TestHTTPServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = ServerState()
        do {
            let channel = try ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 512)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // Hostile-server tests send control bytes in
                        // headers (Content-Type, Location): NIO would refuse them.
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withOutboundHeaderValidation: false)
                        try channel.pipeline.syncOperations.addHandler(RouteHandler(state: state))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .wait()
            guard let port = channel.localAddress?.port else {
                try? channel.close().wait()
                throw TestServerError(description: "server bound without a port")
            }
            return TestHTTPServer(group: group, channel: channel, state: state, port: port)
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    /// A port on 127.0.0.1 that nothing listens on (bound, then closed), for
    /// connection-refused tests.
    public static func closedPort() throws -> Int {
        let server = try start()
        let port = server.port
        server.shutdown()
        return port
    }

    public func url(_ path: String) -> String { baseURL + path }

    public func setFile(_ path: String, bytes: [UInt8], contentType: String = "application/octet-stream",
                        etag: String? = nil, lastModified: String? = nil, vary: String? = nil, cacheControl: String? = nil) {
        state.setFile(path, ServedFile(bytes: bytes, contentType: contentType, etag: etag, lastModified: lastModified, vary: vary,
                                       cacheControl: cacheControl))
    }

    public func removeFile(_ path: String) { state.removeFile(path) }

    /// Requests whose path (query excluded) was `path`.
    public func requestCount(path: String) -> Int { state.snapshot { $0.perPath[path, default: 0] } }
    public var totalRequests: Int { state.snapshot { $0.total } }
    /// The most requests open at one time since start (or resetStats).
    public var maxConcurrentRequests: Int { state.snapshot { $0.maxOpen } }
    public var openRequests: Int { state.snapshot { $0.open } }
    /// The most TCP connections open at one time since start (or resetStats).
    public var maxOpenConnections: Int { state.snapshot { $0.maxConnections } }
    /// TCP connections open now.
    public var openConnections: Int { state.snapshot { $0.connections } }
    /// When each request head arrived, in monotonic seconds, in order.
    public func requestTimes() -> [Double] { state.snapshot { $0.times } }
    /// 429 answers of the /throttle route.
    public var throttledCount: Int { state.snapshot { $0.throttled.count } }
    /// When each 429 of the /throttle route was sent, monotonic seconds.
    public func throttleTimes() -> [Double] { state.snapshot { $0.throttled } }
    /// Request targets (path and query) in the order their heads arrived.
    public func requestLog() -> [String] { state.snapshot { $0.log } }
    /// Headers of the last request to `path`, names lowercased.
    public func lastRequestHeaders(path: String) -> [String: String]? { state.snapshot { $0.lastHeaders[path] } }

    public func resetStats() {
        state.mutate { s in
            s.total = 0
            s.maxOpen = s.open
            s.perPath = [:]
            s.log = []
            s.lastHeaders = [:]
            s.times = []
            s.maxConnections = s.connections
            s.throttled = []
        }
    }

    /// Waits (polling, bounded) until `condition` holds; false on timeout.
    @discardableResult
    public func waitFor(timeout: Double = 5, _ condition: (TestHTTPServer) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(self) { return true }
            usleep(2_000)
        }
        return condition(self)
    }

    public func shutdown() {
        shutdownLock.lock()
        defer { shutdownLock.unlock() }
        guard !isShutDown else { return }
        isShutDown = true
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    deinit { shutdown() }
}

public struct TestServerError: Error, CustomStringConvertible {
    public let description: String
}

/// Everything the handlers share across connections, behind one lock.
final class ServerState: @unchecked Sendable {
    struct Stats {
        var files: [String: TestHTTPServer.ServedFile] = [:]
        var total = 0
        var open = 0
        var maxOpen = 0
        var perPath: [String: Int] = [:]
        var log: [String] = []
        var lastHeaders: [String: [String: String]] = [:]
        var times: [Double] = []
        var connections = 0
        var maxConnections = 0
        var throttled: [Double] = []
        /// /throttle/{n}: tokens and the time they were counted, by n.
        var buckets: [Int: (tokens: Double, at: Double)] = [:]
    }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    func connectionOpened() {
        mutate { s in
            s.connections += 1
            s.maxConnections = max(s.maxConnections, s.connections)
        }
    }

    func connectionClosed() { mutate { $0.connections -= 1 } }

    /// Takes a token of the /throttle/{rate} bucket; false: answer 429.
    func takeThrottleToken(rate: Int) -> Bool {
        mutate { s in
            let now = Self.now()
            let burst = max(1, Double(rate) / 10)
            var b = s.buckets[rate] ?? (burst, now)
            b.tokens = min(burst, b.tokens + (now - b.at) * Double(rate))
            b.at = now
            let ok = b.tokens >= 1
            if ok { b.tokens -= 1 } else { s.throttled.append(now) }
            s.buckets[rate] = b
            return ok
        }
    }

    private let lock = NSLock()
    private var stats = Stats()

    func snapshot<T>(_ body: (Stats) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(stats)
    }

    func mutate<T>(_ body: (inout Stats) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&stats)
    }

    func setFile(_ path: String, _ file: TestHTTPServer.ServedFile) { mutate { $0.files[path] = file } }
    func removeFile(_ path: String) { mutate { $0.files[path] = nil } }
    func file(_ path: String) -> TestHTTPServer.ServedFile? { snapshot { $0.files[path] } }

    /// Records a request head; returns how many requests this path has had,
    /// this one included (the flaky routes count on it).
    func requestStarted(target: String, path: String, headers: HTTPHeaders) -> Int {
        mutate { s in
            s.total += 1
            s.open += 1
            s.maxOpen = max(s.maxOpen, s.open)
            s.log.append(target)
            s.times.append(Self.now())
            var h: [String: String] = [:]
            for (name, value) in headers { h[name.lowercased()] = value }
            s.lastHeaders[path] = h
            s.perPath[path, default: 0] += 1
            return s.perPath[path, default: 0]
        }
    }

    func requestEnded() { mutate { $0.open -= 1 } }
}

/// One per connection. HTTP/1.1 requests on a connection are sequential (the
/// pipelining handler in front holds later ones back until `.end` is written).
final class RouteHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: ServerState
    private var head: HTTPRequestHead?
    /// True between a counted request head and its end (or the close).
    private var requestOpen = false

    init(state: ServerState) { self.state = state }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
        case .body:
            break
        case .end:
            guard let h = head else { return }
            head = nil
            let (path, query) = Self.split(h.uri)
            let countForPath = state.requestStarted(target: h.uri, path: path, headers: h.headers)
            requestOpen = true
            route(context: context, path: path, query: query, request: h, countForPath: countForPath)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        state.connectionOpened()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        endRequest()
        state.connectionClosed()
        context.fireChannelInactive()
    }

    private func endRequest() {
        if requestOpen {
            requestOpen = false
            state.requestEnded()
        }
    }

    static func split(_ uri: String) -> (String, String) {
        guard let q = uri.firstIndex(of: "?") else { return (uri, "") }
        return (String(uri[..<q]), String(uri[uri.index(after: q)...]))
    }

    // MARK: routing

    private func route(context: ChannelHandlerContext, path: String, query: String, request: HTTPRequestHead, countForPath: Int) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        // Everything after the first `k` components, as a path ("" when none).
        func rest(after k: Int) -> String {
            parts.count > k ? "/" + parts[k...].joined(separator: "/") : ""
        }
        func intPart(_ i: Int) -> Int? { parts.count > i ? Int(parts[i]) : nil }
        let first = parts.first ?? ""

        switch first {
        case "status":
            guard let code = intPart(1) else { return notFound(context) }
            send(context, status: .init(statusCode: code), body: Array("status \(code): FAILED-RESPONSE-BODY\n".utf8))
        case "slow":
            guard let ms = intPart(1) else { return notFound(context) }
            let next = rest(after: 2)
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(ms))) {
                guard context.channel.isActive else { return }
                self.route(context: context, path: next, query: query, request: request, countForPath: countForPath)
            }
        case "flaky":
            guard let n = intPart(1) else { return notFound(context) }
            if countForPath <= n {
                send(context, status: .internalServerError, body: Array("flaky FAILED-RESPONSE-BODY\n".utf8))
            } else {
                route(context: context, path: rest(after: 2), query: query, request: request, countForPath: countForPath)
            }
        case "retry-after", "retry-after-date", "too-many":
            guard let seconds = intPart(1), let n = intPart(2) else { return notFound(context) }
            if countForPath <= n {
                let value = first != "retry-after-date" ? String(seconds) : Self.httpDate(Date().addingTimeInterval(Double(seconds)))
                send(context, status: first == "too-many" ? .tooManyRequests : .serviceUnavailable, headers: [("Retry-After", value)],
                     body: Array("busy FAILED-RESPONSE-BODY\n".utf8))
            } else {
                route(context: context, path: rest(after: 3), query: query, request: request, countForPath: countForPath)
            }
        case "throttle":
            guard let rate = intPart(1), rate > 0 else { return notFound(context) }
            if state.takeThrottleToken(rate: rate) {
                route(context: context, path: rest(after: 2), query: query, request: request, countForPath: countForPath)
            } else {
                send(context, status: .tooManyRequests, headers: [("Retry-After", "1")],
                     body: Array("slow down FAILED-RESPONSE-BODY\n".utf8))
            }
        case "redirect":
            guard let n = intPart(1) else { return notFound(context) }
            if n <= 0 {
                route(context: context, path: rest(after: 2), query: query, request: request, countForPath: countForPath)
            } else {
                // With a body, as real servers send: it must never reach the
                // client's result.
                send(context, status: .found, headers: [("Location", "/redirect/\(n - 1)\(rest(after: 2))")],
                     body: Array("<a href=\"...\">moved</a> FAILED-RESPONSE-BODY\n".utf8))
            }
        case "loop":
            send(context, status: .found, headers: [("Location", "/loop")], body: [])
        case "redirect-to":
            let target = Self.queryValue(query, "url") ?? ""
            send(context, status: .found, headers: [("Location", target)], body: [])
        case "redirect-nolocation":
            send(context, status: .found, body: Array("no location FAILED-RESPONSE-BODY\n".utf8))
        case "reset", "truncate":
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "100000")
            headers.add(name: "Content-Type", value: "image/png")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: .ok, headers: headers))), promise: nil)
            let partial = context.channel.allocator.buffer(bytes: [UInt8](repeating: 0x42, count: 1000))
            let abort = first == "reset"
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(partial)))).assumeIsolated().whenComplete { _ in
                guard abort, let socket = context.channel as? SocketOptionProvider else {
                    return context.close(promise: nil)
                }
                // SO_LINGER 0: close() sends RST instead of FIN.
                socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            }
        case "empty-reply":
            context.close(promise: nil)
        case "huge", "huge-length":
            guard let size = intPart(1), size >= 0 else { return notFound(context) }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "image/jpeg")
            if first == "huge-length" { headers.add(name: "Content-Length", value: String(size)) }
            let status = Self.queryValue(query, "status").flatMap(Int.init).map { HTTPResponseStatus(statusCode: $0) } ?? .ok
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
            stream(context, remaining: size)
        case "gzip":
            guard let (status, type, body) = resolveBody(path: rest(after: 1)) else { return notFound(context) }
            send(context, status: status, headers: [("Content-Type", type), ("Content-Encoding", "gzip")],
                 body: GzipStored.encode(body))
        case "html":
            send(context, status: .ok, headers: [("Content-Type", "text/html; charset=utf-8")],
                 body: Array("<!doctype html><html><head><title>Not an image</title></head><body>hello</body></html>\n".utf8))
        case "echo-headers":
            let text = request.headers.map { "\($0.name.lowercased()): \($0.value)\n" }.joined()
            send(context, status: .ok, headers: [("Content-Type", "text/plain")], body: Array(text.utf8))
        default:
            serveFile(context: context, path: path, request: request)
        }
    }

    /// A registered file or the "ok" default for an empty path.
    private func resolveBody(path: String) -> (HTTPResponseStatus, String, [UInt8])? {
        if path.isEmpty || path == "/" { return (.ok, "text/plain", Array("ok\n".utf8)) }
        guard let file = state.file(path) else { return nil }
        return (.ok, file.contentType, file.bytes)
    }

    private func serveFile(context: ChannelHandlerContext, path: String, request: HTTPRequestHead) {
        if path.isEmpty || path == "/" {
            return send(context, status: .ok, headers: [("Content-Type", "text/plain")], body: Array("ok\n".utf8))
        }
        guard let file = state.file(path) else { return notFound(context) }
        var headers: [(String, String)] = [("Content-Type", file.contentType)]
        if let etag = file.etag { headers.append(("ETag", etag)) }
        if let lm = file.lastModified { headers.append(("Last-Modified", lm)) }
        if let vary = file.vary { headers.append(("Vary", vary)) }
        if let cacheControl = file.cacheControl { headers.append(("Cache-Control", cacheControl)) }
        let inm = request.headers.first(name: "If-None-Match")
        let ims = request.headers.first(name: "If-Modified-Since")
        let etagMatches = inm.map { value in
            value.trimmingCharacters(in: .whitespaces) == "*"
                || value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == file.etag }
        } ?? false
        let dateMatches = ims != nil && ims == file.lastModified
        // If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
        if etagMatches || (inm == nil && dateMatches) {
            return send(context, status: .notModified, headers: headers.filter { $0.0 != "Content-Type" }, body: [])
        }
        send(context, status: .ok, headers: headers, body: file.bytes)
    }

    private func notFound(_ context: ChannelHandlerContext) {
        send(context, status: .notFound, headers: [("Content-Type", "text/plain")], body: Array("not found FAILED-RESPONSE-BODY\n".utf8))
    }

    private func send(_ context: ChannelHandlerContext, status: HTTPResponseStatus, headers: [(String, String)] = [], body: [UInt8]) {
        var h = HTTPHeaders(headers)
        // 304 and 1xx carry no body and no length.
        if status != .notModified {
            h.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: h))), promise: nil)
        if !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        finish(context)
    }

    private func finish(_ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            self.endRequest()
        }
    }

    /// Writes `remaining` bytes in 64 KiB chunks, each after the previous one
    /// was flushed, so a client that stops reading stops the stream.
    private func stream(_ context: ChannelHandlerContext, remaining: Int) {
        guard remaining > 0 else { return finish(context) }
        let n = min(remaining, 64 << 10)
        let chunk = context.channel.allocator.buffer(repeating: 0x41, count: n)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk)))).assumeIsolated().whenComplete { result in
            switch result {
            case .success: self.stream(context, remaining: remaining - n)
            case .failure: context.close(promise: nil)
            }
        }
    }

    static func queryValue(_ query: String, _ name: String) -> String? {
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.first.map(String.init) == name {
                let raw = kv.count > 1 ? String(kv[1]) : ""
                return raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
            }
        }
        return nil
    }

    static func httpDate(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return f.string(from: date)
    }
}

/// gzip with stored (uncompressed) deflate blocks: a valid stream that any
/// inflater accepts, without linking zlib into the tests.
enum GzipStored {
    static func encode(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]
        var offset = 0
        repeat {
            let n = min(65535, data.count - offset)
            let last = offset + n == data.count
            out.append(last ? 1 : 0)
            out.append(UInt8(n & 0xff)); out.append(UInt8(n >> 8))
            out.append(UInt8(~n & 0xff)); out.append(UInt8((~n >> 8) & 0xff))
            out.append(contentsOf: data[offset..<offset + n])
            offset += n
        } while offset < data.count
        appendLE32(&out, crc32(data))
        appendLE32(&out, UInt32(truncatingIfNeeded: data.count))
        return out
    }

    private static func appendLE32(_ out: inout [UInt8], _ v: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((v >> UInt32(shift)) & 0xff)) }
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xedb8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }
}
