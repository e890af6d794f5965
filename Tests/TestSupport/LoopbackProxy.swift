import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP forward proxy on 127.0.0.1 (python3's http.server): it
/// serves absolute-form GET requests by fetching them itself (no proxy of
/// its own) and logs each target it served, one line per request, for a
/// test to check what went through a proxy.
public final class LoopbackProxy: @unchecked Sendable {
    public let port: Int
    public var url: String { "http://127.0.0.1:\(port)" }
    private let process: Process
    private let logPath: String

    static let script = #"""
    import os, signal, sys, urllib.request, urllib.error
    # The test runner's ignored SIGTERM is inherited: take it back.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
    log_path = sys.argv[1]
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            with open(log_path, "a") as log:
                log.write(self.path + "\n")
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection", "connection")}
            try:
                response = opener.open(urllib.request.Request(self.path, headers=headers), timeout=10)
                status, body, ctype = response.status, response.read(), response.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                status, body, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
            self.send_response(status)
            if ctype:
                self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """#

    public init() throws {
        guard let python = findTool("python3") else { throw MissingPrerequisite(description: "python3 is not installed") }
        let dir = makeTempDirectory("imgwarm-proxy")
        logPath = dir + "/served.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", Self.script, logPath]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        // The first line is the port it bound.
        var line = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([0x0A]) {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw MissingPrerequisite(description: "the python3 proxy did not start")
        }
        self.port = port
    }

    /// The absolute URLs the proxy served, in order.
    public func served() -> [String] {
        ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    public func shutdown() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { shutdown() }
}
