// Preloaded by live/portkey/serve.py (`node --require loopback.cjs start-server.js ...`): every
// TCP server this node process opens listens on 127.0.0.1 only.
//
// The gateway's start-server.js takes a port but no host, and the web-server library it uses then
// listens on every interface. This target is keyless (anyone who reaches it can make it fetch any
// URL named in a header), so it must not be reachable from outside this machine.
"use strict";

const net = require("net");

const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const [first] = args;
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback]): put 127.0.0.1 in the host's place.
    const rest = typeof args[1] === "string" || args[1] === undefined ? args.slice(2) : args.slice(1);
    return listen.call(this, first, "127.0.0.1", ...rest);
  }
  if (first !== null && typeof first === "object" && first.path === undefined && first.fd === undefined) {
    // listen({port, host, ...}[, callback])
    return listen.call(this, { ...first, host: "127.0.0.1" }, ...args.slice(1));
  }
  return listen.apply(this, args);
};
