//! wrk's Lua environment on LuaJIT (5.1 semantics): the `wrk` table, `wrk.format`,
//! `wrk.lookup`, `wrk.connect`, the `thread` object, and the hooks `setup`, `init`,
//! `delay`, `request`, `response` and `done`.
//!
//! As in wrk there is one Lua state per thread, plus a main state in which `setup`
//! and `done` run. The thread states are created on the main thread (so `setup` can
//! call `thread:set`) and then handed to the workers; after the run they come back,
//! so `done` can read them with `thread:get`.

use crate::histogram::Histogram;
use crate::url::Url;
use mlua::{AnyUserData, Function, Lua, MetaMethod, Table, UserData, UserDataFields, UserDataMethods, Value};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The Lua half of the `wrk` module. The C side of wrk provides lookup/connect/
/// time_us; here Rust provides them (see `install_wrk`).
const PRELUDE: &str = r#"
local wrk = {
   scheme  = "http",
   host    = "localhost",
   port    = nil,
   method  = "GET",
   path    = "/",
   headers = {},
   body    = nil,
   thread  = nil,
}

-- Addresses that accept a connection now. If none does, all of them are kept:
-- the run then goes ahead and every refused attempt counts as a connect error.
function wrk.resolve(host, service)
   local found = wrk.lookup(host, service)
   local usable = {}
   for _, addr in ipairs(found) do
      if wrk.connect(addr) then usable[#usable + 1] = addr end
   end
   if #usable == 0 then
      usable = found
      wrk.unreachable = true
   end
   wrk.addrs = usable
end

function wrk.setup(thread)
   thread.addr = wrk.addrs[1]
   if type(setup) == "function" then setup(thread) end
end

function wrk.init(args)
   if not wrk.headers["Host"] then
      local host = wrk.host
      if host:find(":", 1, true) then host = "[" .. host .. "]" end
      if wrk.port then host = host .. ":" .. wrk.port end
      wrk.headers["Host"] = host
   end
   if type(init) == "function" then init(args) end
   local fixed = wrk.format()
   wrk.request = function() return fixed end
end

-- Builds a request; nil arguments fall back to wrk.method/path/headers/body.
function wrk.format(method, path, headers, body)
   method  = method  or wrk.method
   path    = path    or wrk.path
   headers = headers or wrk.headers
   body    = body    or wrk.body
   if not headers["Host"] then headers["Host"] = wrk.headers["Host"] end
   headers["Content-Length"] = body and #body or nil
   local lines = { method .. " " .. path .. " HTTP/1.1" }
   for name, value in pairs(headers) do
      lines[#lines + 1] = name .. ": " .. tostring(value)
   end
   lines[#lines + 1] = ""
   lines[#lines + 1] = body or ""
   return table.concat(lines, "\r\n")
end

package.loaded.wrk = wrk
return wrk
"#;

const HOOKS: [&str; 6] = ["setup", "init", "delay", "request", "response", "done"];

/// A Lua error as one readable line ("script.lua:3: attempt to call a nil value").
pub fn lua_error_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) => m.split("\nstack traceback").next().unwrap_or(m).trim().to_string(),
        mlua::Error::CallbackError { cause, .. } => lua_error_message(cause),
        mlua::Error::WithContext { context, cause } => format!("{context}: {}", lua_error_message(cause)),
        other => other.to_string().split("\nstack traceback").next().unwrap_or("").trim().to_string(),
    }
}

/// What every state is created from.
#[derive(Clone, Debug)]
pub struct ScriptSpec {
    pub path: Option<PathBuf>,
    pub url: Url,
    pub headers: Vec<String>,
}

/// A `wrk.addr` value.
#[derive(Clone, Copy, Debug)]
pub struct LuaAddr(pub SocketAddr);

impl UserData for LuaAddr {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| Ok(format!("{}:{}", this.0.ip(), this.0.port())));
    }
}

/// Everything the main thread and a worker share about one thread.
pub struct ThreadHandle {
    pub addr: Mutex<Option<SocketAddr>>,
    pub stop: AtomicBool,
    pub lua: Mutex<Lua>,
}

impl ThreadHandle {
    fn new(lua: Lua) -> ThreadHandle {
        ThreadHandle { addr: Mutex::new(None), stop: AtomicBool::new(false), lua: Mutex::new(lua) }
    }
}

/// The `thread` userdata. `own` is set for `wrk.thread` inside the thread's own
/// state, where get/set act on the calling state directly.
struct LuaThread {
    handle: Arc<ThreadHandle>,
    own: bool,
}

/// Copies a value between Lua states (booleans, nil, numbers, strings and tables of
/// them, like wrk).
fn transfer(value: Value, dst: &Lua, depth: usize) -> mlua::Result<Value> {
    if depth > 64 {
        return Err(mlua::Error::runtime("cannot transfer a table nested more than 64 levels deep"));
    }
    Ok(match value {
        Value::Nil => Value::Nil,
        Value::Boolean(b) => Value::Boolean(b),
        Value::Integer(i) => Value::Integer(i),
        Value::Number(n) => Value::Number(n),
        Value::String(s) => Value::String(dst.create_string(s.as_bytes())?),
        Value::Table(t) => {
            let out = dst.create_table()?;
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair?;
                out.raw_set(transfer(k, dst, depth + 1)?, transfer(v, dst, depth + 1)?)?;
            }
            Value::Table(out)
        }
        other => {
            return Err(mlua::Error::runtime(format!("cannot transfer '{}' to thread", other.type_name())));
        }
    })
}

impl LuaThread {
    fn with_state<R>(&self, caller: &Lua, f: impl FnOnce(&Lua) -> mlua::Result<R>) -> mlua::Result<R> {
        if self.own {
            return f(caller);
        }
        let guard = self
            .handle
            .lua
            .try_lock()
            .map_err(|_| mlua::Error::runtime("thread:get/set cannot reach a thread while it is running"))?;
        f(&guard)
    }
}

impl UserData for LuaThread {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("addr", |lua, this| {
            let addr = *this.handle.addr.lock().unwrap();
            match addr {
                Some(a) => Ok(Value::UserData(lua.create_userdata(LuaAddr(a))?)),
                None => Ok(Value::Nil),
            }
        });
        fields.add_field_method_set("addr", |_, this, v: AnyUserData| {
            let a = v
                .borrow::<LuaAddr>()
                .map_err(|_| mlua::Error::runtime("thread.addr must be an address from wrk.lookup"))?;
            *this.handle.addr.lock().unwrap() = Some(a.0);
            Ok(())
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("get", |lua, this, name: String| {
            let v = this.with_state(lua, |t| t.globals().get::<Value>(name.as_str()))?;
            if this.own { Ok(v) } else { transfer(v, lua, 0) }
        });
        methods.add_method("set", |lua, this, (name, value): (String, Value)| {
            if this.own {
                return lua.globals().set(name, value);
            }
            this.with_state(lua, |t| t.globals().set(name, transfer(value, t, 0)?))
        });
        methods.add_method("stop", |_, this, ()| {
            this.handle.stop.store(true, Ordering::Relaxed);
            Ok(())
        });
    }
}

/// The `latency` and `requests` objects given to `done()`.
pub struct LuaStats {
    pub hist: Arc<Histogram>,
    pub min: f64,
    pub max: f64,
}

impl LuaStats {
    fn at_index(&self, i: f64) -> f64 {
        let total = self.hist.total();
        if total == 0 {
            return 0.0;
        }
        self.hist.value_at_percentile(100.0 * i / total as f64) as f64
    }
}

impl UserData for LuaStats {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("min", |_, this| Ok(this.min));
        fields.add_field_method_get("max", |_, this| Ok(this.max));
        fields.add_field_method_get("mean", |_, this| Ok(this.hist.mean()));
        fields.add_field_method_get("stdev", |_, this| Ok(this.hist.stdev()));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("percentile", |_, this, p: f64| Ok(this.hist.value_at_percentile(p) as f64));
        // latency[i] (wrk2) and latency(i) (wrk's SCRIPTING): the value at rank i.
        methods.add_meta_method(MetaMethod::Index, |_, this, i: f64| Ok(this.at_index(i)));
        methods.add_meta_method(MetaMethod::Call, |_, this, i: f64| Ok(this.at_index(i)));
        methods.add_meta_method(MetaMethod::Len, |_, this, ()| Ok(this.hist.total() as f64));
    }
}

fn lookup(host: &str, service: &str) -> Result<Vec<SocketAddr>, String> {
    let port: u16 = match service {
        "http" => 80,
        "https" => 443,
        s => s.parse().map_err(|_| format!("unknown service '{s}'"))?,
    };
    let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs().map_err(|e| e.to_string())?.collect();
    if addrs.is_empty() {
        return Err("no addresses".into());
    }
    Ok(addrs)
}

fn wall_time_us() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_micros() as f64)
}

/// Creates the `wrk` table with the URL parts, headers and native functions.
fn install_wrk(lua: &Lua, spec: &ScriptSpec) -> mlua::Result<()> {
    let wrk: Table = lua.load(PRELUDE).set_name("=wrk").eval()?;
    wrk.set(
        "lookup",
        lua.create_function(|lua, (host, service): (String, String)| {
            let addrs = lookup(&host, &service)
                .map_err(|e| mlua::Error::runtime(format!("unable to resolve {host}:{service}: {e}")))?;
            let t = lua.create_table()?;
            for (i, a) in addrs.into_iter().enumerate() {
                t.raw_set(i + 1, LuaAddr(a))?;
            }
            Ok(t)
        })?,
    )?;
    wrk.set(
        "connect",
        lua.create_function(|_, addr: AnyUserData| {
            let a = addr
                .borrow::<LuaAddr>()
                .map_err(|_| mlua::Error::runtime("wrk.connect expects an address from wrk.lookup"))?;
            Ok(TcpStream::connect_timeout(&a.0, Duration::from_secs(2)).is_ok())
        })?,
    )?;
    wrk.set("time_us", lua.create_function(|_, ()| Ok(wall_time_us()))?)?;
    wrk.set("scheme", spec.url.scheme.as_str())?;
    wrk.set("host", spec.url.host.as_str())?;
    wrk.set("port", spec.url.port.as_deref())?;
    wrk.set("path", spec.url.path.as_str())?;
    let headers: Table = wrk.get("headers")?;
    for h in &spec.headers {
        if let Some((name, value)) = h.split_once(':') {
            headers.set(name.trim(), value.trim())?;
        }
    }
    lua.globals().set("wrk", wrk)?;
    Ok(())
}

/// A fresh state with the `wrk` table and the script loaded and run.
pub fn new_state(spec: &ScriptSpec) -> Result<Lua, String> {
    // SAFETY: wrk gives scripts every standard library (including ffi, debug and C
    // modules); scripts are trusted input written by the person running the test.
    let lua = unsafe { Lua::unsafe_new() };
    install_wrk(&lua, spec).map_err(|e| format!("internal error setting up Lua: {}", lua_error_message(&e)))?;
    if let Some(path) = &spec.path {
        let source = std::fs::read(path).map_err(|e| format!("cannot read script {}: {e}", path.display()))?;
        lua.load(source).set_name(format!("@{}", path.display())).exec().map_err(|e| lua_error_message(&e))?;
    }
    check_hooks(&lua, spec.path.as_deref())?;
    Ok(lua)
}

/// Every hook, if defined, must be a function.
pub fn check_hooks(lua: &Lua, path: Option<&Path>) -> Result<(), String> {
    let name = path.map_or("script".to_string(), |p| p.display().to_string());
    for hook in HOOKS {
        let v: Value = lua.globals().get(hook).map_err(|e| lua_error_message(&e))?;
        if !matches!(v, Value::Nil | Value::Function(_)) {
            return Err(format!("{name}: '{hook}' must be a function, but it is a {}", v.type_name()));
        }
    }
    Ok(())
}

fn global_fn(lua: &Lua, name: &str) -> Option<Function> {
    lua.globals().get::<Option<Function>>(name).ok().flatten()
}

/// Runs `init(args)` in a thread's state and checks its hooks again.
fn init_thread(handle: &ThreadHandle, spec: &ScriptSpec, args: &[String]) -> Result<(), String> {
    let lua = handle.lua.lock().unwrap();
    let twrk: Table = lua.globals().get("wrk").map_err(|e| lua_error_message(&e))?;
    let init: Function = twrk.get("init").map_err(|e| lua_error_message(&e))?;
    let argt = lua.create_table().map_err(|e| lua_error_message(&e))?;
    for (i, a) in args.iter().enumerate() {
        argt.raw_set(i, a.as_str()).map_err(|e| lua_error_message(&e))?;
    }
    init.call::<()>(argt).map_err(|e| lua_error_message(&e))?;
    check_hooks(&lua, spec.path.as_deref())
}

/// The main state (setup/done) and the thread states.
pub struct Scripts {
    pub main: Lua,
    pub threads: Vec<Arc<ThreadHandle>>,
    /// True when no address accepted a connection at start-up.
    pub unreachable: bool,
}

impl Scripts {
    /// Loads the script into the main state and one state per thread, resolves the
    /// host, and runs `setup(thread)` and `init(args)` for each thread, like wrk.
    /// Of a run of `total_threads`, only the threads in `ours` (global indexes, in
    /// order) get a state and `init`; the others still pass through `setup`, in their
    /// place, so a script that numbers its threads in `setup` sees the run's global
    /// thread numbers (with `--segment`, every process seeds differently).
    pub fn prepare(spec: ScriptSpec, total_threads: usize, ours: &[usize], args: &[String]) -> Result<Scripts, String> {
        let main = new_state(&spec)?;
        let wrk: Table = main.globals().get("wrk").map_err(|e| lua_error_message(&e))?;
        let resolve: Function = wrk.get("resolve").map_err(|e| lua_error_message(&e))?;
        resolve.call::<()>((spec.url.host.as_str(), spec.url.service())).map_err(|e| lua_error_message(&e))?;
        let unreachable = wrk.get::<Option<bool>>("unreachable").ok().flatten().unwrap_or(false);
        let setup: Function = wrk.get("setup").map_err(|e| lua_error_message(&e))?;

        let mut handles = Vec::with_capacity(ours.len());
        for t in 0..total_threads {
            if !ours.contains(&t) {
                // Another process's thread: setup() only, on a bare state of its own.
                let handle = Arc::new(ThreadHandle::new(Lua::new()));
                setup.call::<()>(LuaThread { handle, own: false }).map_err(|e| lua_error_message(&e))?;
                continue;
            }
            let handle = Arc::new(ThreadHandle::new(new_state(&spec)?));
            {
                let lua = handle.lua.lock().unwrap();
                let twrk: Table = lua.globals().get("wrk").map_err(|e| lua_error_message(&e))?;
                twrk.set("thread", LuaThread { handle: handle.clone(), own: true })
                    .map_err(|e| lua_error_message(&e))?;
            }
            setup.call::<()>(LuaThread { handle: handle.clone(), own: false }).map_err(|e| lua_error_message(&e))?;
            init_thread(&handle, &spec, args)?;
            if handle.addr.lock().unwrap().is_none() {
                return Err("setup(): thread.addr was set to nil; no server address to connect to".into());
            }
            handles.push(handle);
        }
        Ok(Scripts { main, threads: handles, unreachable })
    }

    pub fn has_done(&self) -> bool {
        global_fn(&self.main, "done").is_some()
    }

    /// Calls `done(summary, latency, requests)` in the main state.
    pub fn call_done(&self, summary: &DoneSummary, latency: LuaStats, requests: LuaStats) -> Result<(), String> {
        let Some(done) = global_fn(&self.main, "done") else { return Ok(()) };
        let lua = &self.main;
        let run = || -> mlua::Result<()> {
            let s = lua.create_table()?;
            s.set("duration", summary.duration_us as f64)?;
            s.set("requests", summary.requests as f64)?;
            s.set("bytes", summary.bytes as f64)?;
            let e = lua.create_table()?;
            e.set("connect", summary.errors[0] as f64)?;
            e.set("read", summary.errors[1] as f64)?;
            e.set("write", summary.errors[2] as f64)?;
            e.set("status", summary.errors[3] as f64)?;
            e.set("timeout", summary.errors[4] as f64)?;
            s.set("errors", e)?;
            done.call::<()>((s, latency, requests))
        };
        run().map_err(|e| lua_error_message(&e))
    }
}

/// The `summary` table of `done()`; errors are connect, read, write, status, timeout.
pub struct DoneSummary {
    pub duration_us: u64,
    pub requests: u64,
    pub bytes: u64,
    pub errors: [u64; 5],
}

/// The hooks a worker calls during the run, taken from its thread's state.
pub struct ThreadHooks {
    pub request: Option<Function>,
    pub response: Option<Function>,
    pub delay: Option<Function>,
    /// `wrk.request()` as prepared by `wrk.init` (used when there is no `request`).
    pub fixed_request: Function,
}

impl ThreadHooks {
    pub fn from_state(lua: &Lua) -> Result<ThreadHooks, String> {
        let wrk: Table = lua.globals().get("wrk").map_err(|e| lua_error_message(&e))?;
        Ok(ThreadHooks {
            request: global_fn(lua, "request"),
            response: global_fn(lua, "response"),
            delay: global_fn(lua, "delay"),
            fixed_request: wrk.get("request").map_err(|e| lua_error_message(&e))?,
        })
    }

    /// Calls `request()` (or the fixed request) and appends its bytes to `out`.
    pub fn make_request(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let f = self.request.as_ref().unwrap_or(&self.fixed_request);
        match f.call::<Value>(()) {
            Ok(Value::String(s)) => {
                out.extend_from_slice(&s.as_bytes());
                Ok(())
            }
            Ok(other) => Err(format!("request() must return a string, it returned a {}", other.type_name())),
            Err(e) => Err(lua_error_message(&e)),
        }
    }

    /// Calls `delay()`; returns milliseconds.
    pub fn delay_ms(&self) -> Result<f64, String> {
        let Some(f) = &self.delay else { return Ok(0.0) };
        match f.call::<Value>(()) {
            Ok(Value::Number(n)) => Ok(n.max(0.0)),
            Ok(Value::Integer(n)) => Ok((n as f64).max(0.0)),
            Ok(Value::Nil) => Ok(0.0),
            Ok(other) => {
                Err(format!("delay() must return a number of milliseconds, it returned a {}", other.type_name()))
            }
            Err(e) => Err(lua_error_message(&e)),
        }
    }

    /// Calls `response(status, headers, body)`.
    pub fn response(&self, lua: &Lua, status: u16, headers: &[(String, String)], body: &[u8]) -> Result<(), String> {
        let Some(f) = &self.response else { return Ok(()) };
        let call = || -> mlua::Result<()> {
            let h = lua.create_table()?;
            for (k, v) in headers {
                h.raw_set(k.as_str(), v.as_str())?;
            }
            f.call::<()>((status as f64, h, lua.create_string(body)?))
        };
        call().map_err(|e| lua_error_message(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: Option<PathBuf>) -> ScriptSpec {
        ScriptSpec { path, url: Url::parse("http://127.0.0.1:1/p?q=1").unwrap(), headers: vec!["X-A: b".into()] }
    }

    #[test]
    fn format_defaults_and_body() {
        let lua = new_state(&spec(None)).unwrap();
        let req: String = lua.load(r#"wrk.init({}) ; return wrk.format("PUT", "/x", nil, "abc")"#).eval().unwrap();
        assert!(req.starts_with("PUT /x HTTP/1.1\r\n"), "{req}");
        assert!(req.contains("\r\nHost: 127.0.0.1:1\r\n") || req.contains("\r\nHost: 127.0.0.1:1\r\n\r\n"), "{req}");
        assert!(req.contains("Content-Length: 3"), "{req}");
        assert!(req.contains("X-A: b"), "{req}");
        assert!(req.ends_with("\r\n\r\nabc"), "{req}");
        let req: String = lua.load("return wrk.format()").eval().unwrap();
        assert!(
            req.starts_with("GET /p?q=1 HTTP/1.1\r\n") && req.ends_with("\r\n\r\n") && !req.contains("Content-Length"),
            "{req}"
        );
    }

    #[test]
    fn stats_object_fields_index_call_len() {
        let lua = Lua::new();
        let mut h = Histogram::new();
        for v in 1..=100u64 {
            h.record(v);
        }
        let stats = LuaStats { hist: Arc::new(h), min: 1.0, max: 100.0 };
        lua.globals().set("s", stats).unwrap();
        let r: Vec<f64> = lua.load("return {s.min, s.max, s.mean, s:percentile(50), s[50], s(50), #s}").eval().unwrap();
        assert_eq!(r, vec![1.0, 100.0, 50.5, 50.0, 50.0, 50.0, 100.0]);
    }

    #[test]
    fn hooks_must_be_functions() {
        let dir = std::env::temp_dir().join(format!("perflab-load-hook-{}", std::process::id()));
        std::fs::write(&dir, "response = 5").unwrap();
        let e = new_state(&spec(Some(dir.clone()))).unwrap_err();
        assert!(e.contains("'response' must be a function"), "{e}");
        std::fs::write(&dir, "x = = 1").unwrap();
        let e = new_state(&spec(Some(dir.clone()))).unwrap_err();
        assert!(e.contains(&format!("{}:1:", dir.display())), "{e}");
        std::fs::remove_file(&dir).ok();
    }
}
