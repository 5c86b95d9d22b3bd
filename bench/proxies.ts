/** The hand-written nginx and Caddy configurations the gateway is compared with: the same key check and relays. */

export interface ProxyPorts {
  /** Where the proxy listens (TLS), and the fixed-reply HTTP and WebSocket upstreams. */
  readonly listen: number;
  readonly http: number;
  readonly ws: number;
}

export interface ProxyFiles {
  readonly work: string;
  readonly cert: string;
  readonly key: string;
  readonly projectKey: string;
  readonly threads: number;
}

/** nginx: the same checks by hand: key via map, 401 otherwise, keep-alive to the upstream. */
export function nginxConf(p: ProxyPorts, f: ProxyFiles): string {
  const { work, cert, key, threads: PROXY_THREADS, projectKey: KEY } = f;
  const [ngPort, upPort, wsPort] = [p.listen, p.http, p.ws];
  return `
worker_processes ${PROXY_THREADS};
daemon off;
pid ${work}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log ${work}/nginx-access.log;
  client_body_temp_path ${work}/nginx-body; proxy_temp_path ${work}/nginx-proxy;
  fastcgi_temp_path ${work}/nginx-fcgi; uwsgi_temp_path ${work}/nginx-uwsgi; scgi_temp_path ${work}/nginx-scgi;
  map $key $key_ok { "${KEY}" 1; default 0; }
  upstream up { server 127.0.0.1:${upPort}; keepalive 64; }
  upstream upws { server 127.0.0.1:${wsPort}; }
  server {
    listen 127.0.0.1:${ngPort} ssl;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    location ~ ^/gateway/eth/rpc-http/(?<key>[^/]+)$ {
      if ($key_ok = 0) { return 401; }
      rewrite ^ / break;
      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
    location ~ ^/gateway/eth/rpc/(?<key>[^/]+)$ {
      if ($key_ok = 0) { return 401; }
      rewrite ^ / break;
      proxy_pass http://upws;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
      proxy_read_timeout 1h;
    }
    location / { return 404; }
  }
}
`;
}

/** Caddy: path matchers with the key, 401 otherwise. */
export function caddyfile(p: ProxyPorts, f: ProxyFiles): string {
  const { work, cert, key, projectKey: KEY } = f;
  const [cdPort, upPort, wsPort] = [p.listen, p.http, p.ws];
  return `{
  admin off
  auto_https off
  storage file_system ${work}/caddy
}
https://localhost:${cdPort}, https://127.0.0.1:${cdPort} {
  bind 127.0.0.1
  tls ${cert} ${key}
  log {
    output file ${work}/caddy-access.log
  }
  @rpc path /gateway/eth/rpc-http/${KEY}
  handle @rpc {
    rewrite * /
    reverse_proxy 127.0.0.1:${upPort}
  }
  @ws path /gateway/eth/rpc/${KEY}
  handle @ws {
    rewrite * /
    reverse_proxy 127.0.0.1:${wsPort}
  }
  handle {
    respond 401
  }
}
`;
}
