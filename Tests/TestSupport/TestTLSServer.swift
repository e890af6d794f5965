// An HTTPS + HTTP/2 server on 127.0.0.1 for tests, backed by nginx (installed
// by scripts/setup.sh) with a throwaway self-signed certificate for
// 127.0.0.1. SwiftNIO alone has no TLS or HTTP/2 here, and TLS verification
// and HTTP/2 multiplexing need a real peer. Tests that use it skip themselves
// when `TestTLSServer.isAvailable` is false.
//
// It serves the files written with `setFile` as static files, and logs every
// request as `PROTOCOL CONNECTION-NUMBER SESSION-REUSED URI`, so tests can
// count requests per connection (multiplexing puts many on one connection)
// and see TLS session resumption.

import Foundation

public final class TestTLSServer: @unchecked Sendable {
    public let port: Int
    public var baseURL: String { "https://127.0.0.1:\(port)" }
    public func url(_ path: String) -> String { baseURL + path }
    /// The server's self-signed certificate (PEM): a CA bundle that
    /// trusts it (`--cacert`).
    public var certificatePath: String { directory.path + "/cert.pem" }

    private let directory: URL
    private let process: Process
    private let lock = NSLock()
    private var stopped = false

    /// nginx with the HTTP/2 module, and openssl, are on PATH.
    public static var isAvailable: Bool {
        guard let nginx = findTool("nginx"), findTool("openssl") != nil else { return false }
        let output = (try? run(nginx, ["-V"])) ?? ""
        return output.contains("http_v2_module")
    }

    public struct LogLine: Sendable, Equatable {
        public var httpProtocol: String
        public var connection: Int
        /// The connection resumed an earlier TLS session.
        public var sessionReused: Bool
        public var uri: String
    }

    /// `keepaliveRequests`: nginx closes a connection after that many
    /// requests (1 forces a new connection, and TLS handshake, per request).
    /// `http2: false` offers only HTTP/1.1 in ALPN. `serverConfig`: more
    /// directives of the server block (e.g. a `location` that redirects).
    /// `loggedHeader`: a request header (lowercase, `-` as `_`, as nginx's
    /// `$http_NAME`) that `headerLog` reports per request, with the scheme.
    public static func start(http2: Bool = true, keepaliveRequests: Int? = nil, serverConfig: String = "",
                             loggedHeader: String? = nil) throws -> TestTLSServer {
        guard let nginx = findTool("nginx"), let openssl = findTool("openssl") else {
            throw TestServerError(description: "nginx or openssl not installed")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imgwarm-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("www"), withIntermediateDirectories: true)
        let d = dir.path
        _ = try run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                              "-keyout", "\(d)/key.pem", "-out", "\(d)/cert.pem", "-days", "2",
                              "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        // A free port now; nginx binds it a moment later (a small race that
        // the retry loop below absorbs).
        for _ in 0..<3 {
            let port = try TestHTTPServer.closedPort()
            let config = """
            master_process off;
            daemon off;
            pid \(d)/nginx.pid;
            error_log \(d)/error.log;
            events { worker_connections 512; }
            http {
              log_format t '$server_protocol $connection $ssl_session_reused $request_uri';
              \(keepaliveRequests.map { "keepalive_requests \($0);" } ?? "")
              access_log \(d)/access.log t;
              \(loggedHeader.map { "log_format h '$scheme $request_uri [$http_\($0)]'; access_log \(d)/headers.log h;" } ?? "")
              client_body_temp_path \(d)/tmp;
              proxy_temp_path \(d)/tmp; fastcgi_temp_path \(d)/tmp; uwsgi_temp_path \(d)/tmp; scgi_temp_path \(d)/tmp;
              server {
                listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : "");
                ssl_certificate \(d)/cert.pem;
                ssl_certificate_key \(d)/key.pem;
                ssl_protocols TLSv1.2 TLSv1.3;
                ssl_session_cache shared:imgwarm:1m;
                root \(d)/www;
                \(serverConfig)
              }
            }
            """
            try config.write(toFile: "\(d)/nginx.conf", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: nginx)
            process.arguments = ["-p", d, "-c", "\(d)/nginx.conf", "-e", "\(d)/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if waitForListener(port: port, process: process) {
                return TestTLSServer(port: port, directory: dir, process: process)
            }
            Self.kill(process)
        }
        try? FileManager.default.removeItem(at: dir)
        throw TestServerError(description: "nginx did not start")
    }

    private init(port: Int, directory: URL, process: Process) {
        self.port = port
        self.directory = directory
        self.process = process
    }

    public func setFile(_ path: String, bytes: [UInt8]) throws {
        let file = directory.appendingPathComponent("www").appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
    }

    /// Requests served so far (nginx writes the log line when a request ends).
    public func log() -> [LogLine] {
        let text = (try? String(contentsOfFile: directory.appendingPathComponent("access.log").path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 4, let connection = Int(parts[1]) else { return nil }
            return LogLine(httpProtocol: String(parts[0]), connection: connection, sessionReused: parts[2] == "r",
                           uri: String(parts[3]))
        }
    }

    /// `scheme uri [value]` per request, when started with `loggedHeader`
    /// (an empty value: the header was not sent).
    public func headerLog() -> [String] {
        let text = (try? String(contentsOfFile: directory.appendingPathComponent("headers.log").path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    public func shutdown() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        Self.kill(process)
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { shutdown() }

    // MARK: helpers

    /// SIGKILL, not terminate(): nginx started from a test process inherits
    /// the signal mask of the (dispatch) thread that spawned it, where SIGTERM
    /// is blocked, and single-process nginx never unblocks it. Nothing of
    /// this server's state needs a graceful stop.
    private static func kill(_ process: Process) {
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }


    @discardableResult
    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        guard let result = runTool(executable, arguments) else {
            throw TestServerError(description: "cannot start \(executable)")
        }
        guard result.status == 0 || arguments == ["-V"] else {
            throw TestServerError(description: "\(executable) failed with status \(result.status)")
        }
        return result.output
    }

    /// Polls until something accepts TCP connections on the port (bounded).
    private static func waitForListener(port: Int, process: Process) -> Bool {
        for _ in 0..<200 {
            guard process.isRunning else { return false }
            if canConnect(port: port) { return true }
            usleep(10_000)
        }
        return false
    }

    private static func canConnect(port: Int) -> Bool {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }
}
