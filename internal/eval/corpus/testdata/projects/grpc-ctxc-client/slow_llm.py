"""A stand-in for a chat-completions endpoint that is overloaded: it accepts
every request and answers after 30 seconds. python3 slow_llm.py PORT"""
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class SlowHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(30)
        body = b'{"choices": [{"message": {"role": "assistant", "content": "(late)"}}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        sys.stderr.write("slow_llm: " + fmt % args + "\n")


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), SlowHandler).serve_forever()
