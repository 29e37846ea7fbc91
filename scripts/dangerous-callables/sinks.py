"""What the analysis treats as a sink: names whose reaching runs code or does I/O.

Three kinds, each with what reaching it does (the reason socair's FAIL gives):

* SINKS: fully qualified names. A name matches when it is the entry or lies inside it
  (`subprocess` matches `subprocess.Popen`). Most are C functions the analysis cannot read
  (builtins, `posix`, `_io`, `_socket`, `_ctypes`, `_pickle`, `marshal`, torch's and numpy's
  C functions); some are Python modules kept as whole sinks so that witnesses stay short
  (`subprocess`, `importlib`, `socket`), or Python functions whose way to their sink passes
  through a parameter the analysis cannot type (`torch.load` unpickles with whatever
  `pickle_module` it is given).
* METHOD_SINKS: attribute names that are sinks whatever the receiver, for calls on objects
  whose class the analysis does not know (`arr.tofile(path)`, `pickle_module.Unpickler`,
  `path.write_text(...)`): only names no harmless method commonly has.
`builtins.compile` is not a sink: compiling a string runs nothing (the code object it makes
runs only through exec, eval or a function built from it, which are sinks); a pickle that
names compile itself is FAIL by the hand-written table.

* BARRIERS: callables that do I/O only where the running program configured it (warnings
  printed with their source line, log records sent to configured handlers, translations read
  from the installed catalogs, tracebacks formatted from source files). Calls into them are not
  followed; they still get rows of their own when they reach a sink, since a pickle may name
  them directly.

A call of a sink whose arguments are all fixed by the program (analyse.py `fixed`) is not an
edge: `importlib.util.find_spec("torch")` imports a fixed module, `ctypes.CDLL(path)` over a
path built from constants and `__file__` loads the library the package ships.
"""

RUNS_CODE = "runs code"
IMPORTS = "imports a module by name"
COMMANDS = "runs commands"
NETWORK = "opens network connections"
NATIVE = "loads or calls native code"
UNPICKLES = "loads a nested pickle or code object"
FILES = "reads or writes files"
DEBUGGER = "starts a debugger"
SIGNALS = "signals other processes"

# How the table spells each (plugins/shared/pickle/src/globals/callables.rs `WHAT` says them again).
CODES = {RUNS_CODE: "code", IMPORTS: "import", COMMANDS: "command", SIGNALS: "signal",
         NETWORK: "network", NATIVE: "native", UNPICKLES: "unpickle", FILES: "file",
         DEBUGGER: "debugger"}

SINKS = {
    # Evaluators and code.
    "builtins.eval": RUNS_CODE,
    "builtins.exec": RUNS_CODE,
    "builtins.execfile": RUNS_CODE,
    "builtins.breakpoint": DEBUGGER,
    "sys.breakpointhook": DEBUGGER,
    "types.CodeType": RUNS_CODE,
    "types.FunctionType": RUNS_CODE,
    "marshal.load": UNPICKLES,
    "marshal.loads": UNPICKLES,
    "torch._C.import_ir_module": RUNS_CODE,
    "torch._C.import_ir_module_from_buffer": RUNS_CODE,
    "torch._C._load_for_lite_interpreter": RUNS_CODE,
    "torch._C._load_for_lite_interpreter_from_buffer": RUNS_CODE,
    "torch._C._load_jit_module_from_file": RUNS_CODE,
    "torch._C._load_jit_module_from_bytes": RUNS_CODE,
    "torch._C._load_mobile_module_from_file": RUNS_CODE,
    "torch._C._load_mobile_module_from_bytes": RUNS_CODE,
    "torch._C._jit_script_compile": RUNS_CODE,
    "torch._C._jit_script_class_compile": RUNS_CODE,
    # Imports.
    "builtins.__import__": IMPORTS,
    "importlib.import_module": IMPORTS,
    "importlib.__import__": IMPORTS,
    "importlib.reload": IMPORTS,
    "importlib.util.find_spec": IMPORTS,
    "importlib.util.spec_from_file_location": IMPORTS,
    "importlib.util.spec_from_loader": IMPORTS,
    "importlib.util.module_from_spec": IMPORTS,
    "importlib._bootstrap._gcd_import": IMPORTS,
    "importlib._bootstrap._find_and_load": IMPORTS,
    "importlib._bootstrap._load": IMPORTS,
    "importlib._bootstrap._exec": IMPORTS,
    "importlib._bootstrap._find_spec": IMPORTS,
    "_imp": IMPORTS,
    "zipimport": IMPORTS,
    "pkgutil.resolve_name": IMPORTS,
    # Processes.
    "subprocess": COMMANDS,
    "_posixsubprocess": COMMANDS,
    "_winapi.CreateProcess": COMMANDS,
    "pty.spawn": COMMANDS,
    "pty.fork": COMMANDS,
    # Network.
    "_socket.socket": NETWORK,
    "_socket.socketpair": NETWORK,
    "_socket.getaddrinfo": NETWORK,
    "_socket.gethostbyname": NETWORK,
    "_socket.gethostbyname_ex": NETWORK,
    "_socket.gethostbyaddr": NETWORK,
    "_socket.getnameinfo": NETWORK,
    "socket.socket": NETWORK,
    "socket.create_connection": NETWORK,
    "socket.create_server": NETWORK,
    "socket.getaddrinfo": NETWORK,
    "socket.gethostbyname": NETWORK,
    "socket.gethostbyname_ex": NETWORK,
    "socket.gethostbyaddr": NETWORK,
    "socket.getfqdn": NETWORK,
    "socket.fromfd": NETWORK,
    "requests": NETWORK,
    "httpx": NETWORK,
    "urllib3": NETWORK,
    "aiohttp": NETWORK,
    "websocket": NETWORK,
    "websockets": NETWORK,
    "grpc": NETWORK,
    "paramiko": NETWORK,
    "boto3": NETWORK,
    "botocore": NETWORK,
    "torch._C._distributed_c10d.TCPStore": NETWORK,
    "torch._C._distributed_c10d.FileStore": FILES,
    "torch._C._distributed_c10d.ProcessGroupGloo": NETWORK,
    "torch._C._distributed_c10d.ProcessGroupNCCL": NETWORK,
    "torch._C._distributed_c10d.ProcessGroupMPI": NETWORK,
    "torch._C._distributed_c10d.ProcessGroupUCC": NETWORK,
    "torch._C._distributed_rpc": NETWORK,
    # Native code.
    "_ctypes.dlopen": NATIVE,
    "_ctypes.dlsym": NATIVE,
    "_ctypes.dlclose": NATIVE,
    "_ctypes.call_function": NATIVE,
    "_ctypes.call_cdeclfunction": NATIVE,
    "_ctypes.CFuncPtr": NATIVE,
    "_ctypes.LoadLibrary": NATIVE,
    "_ctypes.PyObj_FromPtr": NATIVE,
    "ctypes.CDLL": NATIVE,
    "ctypes.PyDLL": NATIVE,
    "ctypes.WinDLL": NATIVE,
    "ctypes.OleDLL": NATIVE,
    "ctypes.LibraryLoader": NATIVE,
    "ctypes.cdll": NATIVE,
    "ctypes.pydll": NATIVE,
    "ctypes.windll": NATIVE,
    "ctypes.oledll": NATIVE,
    "ctypes.pythonapi": NATIVE,
    "ctypes.CFUNCTYPE": NATIVE,
    "ctypes.PYFUNCTYPE": NATIVE,
    "ctypes.WINFUNCTYPE": NATIVE,
    "ctypes.memmove": NATIVE,
    "ctypes.memset": NATIVE,
    "ctypes.string_at": NATIVE,
    "ctypes.wstring_at": NATIVE,
    "cffi": NATIVE,
    "torch._C._dl_open": NATIVE,
    # Unpicklers.
    "pickle.load": UNPICKLES,
    "pickle.loads": UNPICKLES,
    "pickle.Unpickler": UNPICKLES,
    "pickle._Unpickler": UNPICKLES,
    "pickle._load": UNPICKLES,
    "pickle._loads": UNPICKLES,
    "_pickle.load": UNPICKLES,
    "_pickle.loads": UNPICKLES,
    "_pickle.Unpickler": UNPICKLES,
    "dill": UNPICKLES,
    "cloudpickle": UNPICKLES,
    "torch.load": UNPICKLES,
    "torch.serialization.load": UNPICKLES,
    "torch._C._jit_unpickle": UNPICKLES,
    # Files.
    "builtins.open": FILES,
    "io.open": FILES,
    "io.open_code": FILES,
    "io.FileIO": FILES,
    "_io.open": FILES,
    "_io.open_code": FILES,
    "_io.FileIO": FILES,
    "mmap.mmap": FILES,
    "_sqlite3.connect": FILES,
    "_dbm.open": FILES,
    "_gdbm.open": FILES,
    "readline.read_history_file": FILES,
    "readline.write_history_file": FILES,
    "readline.append_history_file": FILES,
    "readline.read_init_file": FILES,
    "numpy.fromfile": FILES,
    "numpy._core.multiarray.fromfile": FILES,
    "numpy._core._multiarray_umath.fromfile": FILES,
    "numpy.core.multiarray.fromfile": FILES,
    "numpy.ndarray.tofile": FILES,
    "numpy.ndarray.dump": FILES,
    "torch.from_file": FILES,
    "torch._C._VariableFunctions.from_file": FILES,
    "torch._C.StorageBase.from_file": FILES,
    "torch._C._StorageBase.from_file": FILES,
    "torch.UntypedStorage.from_file": FILES,
    "torch._C.PyTorchFileReader": FILES,
    "torch._C.PyTorchFileWriter": FILES,
    "torch._C._save_jit_module": FILES,
    "torch._C._save_mobile_module": FILES,
    "torch._C._save_parameters": FILES,
    "torch._C._load_mobile_module_from_file": FILES,
    "safetensors._safetensors_rust.serialize_file": FILES,
    "safetensors._safetensors_rust.safe_open": FILES,
    "safetensors._safetensors_rust._safe_open_handle": FILES,
    # The standard library's SAX entry point: Lib/xml/sax/__init__.py (3.11.7) `parse(source,
    # ...)` calls `make_parser().parse(source)`, and make_parser picks its parser by importing
    # a module named in a list (`xml.sax.expatreader` by default), so the analysis cannot type
    # the parser; ExpatParser.parse opens a path it is given (xml/sax/saxutils.py
    # `prepare_input_source` -> open).
    "xml.sax.parse": FILES,
    # h5py 3.16.0's Cython half (h5py/h5f.pyx, not in the wheel as source): `open` and
    # `create` wrap H5Fopen and H5Fcreate on the path they are given; h5py/_hl/files.py
    # `make_fid`, which `File.__init__` calls for every mode, reaches them.
    "h5py.h5f.open": FILES,
    "h5py.h5f.create": FILES,
    # onnx 1.23.2's C++ half (onnx/cpp2py_export.cc, shipped in the wheel): checker's
    # `check_model_path` and `_open_external_data` read the path (and the model's external
    # data beside it), shape_inference's `infer_shapes_path` reads one path and writes another.
    "onnx.onnx_cpp2py_export.checker.check_model_path": FILES,
    "onnx.onnx_cpp2py_export.checker._open_external_data": FILES,
    "onnx.onnx_cpp2py_export.shape_inference.infer_shapes_path": FILES,
    # Unsafe parsers whose way to their sink the analysis cannot follow (a tag-to-method
    # registry filled at import, yaml/constructor.py 6.0.4 `add_constructor` calls at module
    # level): PyYAML's UnsafeConstructor builds any object from a document
    # (`!!python/object/apply:os.system`: `find_python_name` imports the module,
    # `make_python_instance` calls what it names); FullConstructor makes an instance of any
    # class of an already imported module and runs its `__setstate__`
    # (`construct_python_object`, `set_python_instance_state`), what a pickle's NEWOBJ and
    # BUILD do. Every loader class deriving from either (UnsafeLoader, Loader, FullLoader and
    # their C twins in yaml/cyaml.py) is one of them.
    "yaml.constructor.UnsafeConstructor": UNPICKLES,
    "yaml.constructor.FullConstructor": UNPICKLES,
}

# The file and process functions of the os module's C half (os.py does `from posix import *`,
# and pickle names os.system as posix.system): each spelt under posix, nt and os.
_OS_COMMANDS = [
    "system", "popen", "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp",
    "execvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp",
    "spawnvpe", "posix_spawn", "posix_spawnp", "fork", "forkpty", "startfile",
]
_OS_SIGNALS = ["kill", "killpg"]
_OS_FILES = [
    "open", "fdopen", "remove", "unlink", "rmdir", "removedirs", "mkdir", "makedirs", "rename",
    "renames", "replace", "symlink", "link", "chmod", "lchmod", "fchmod", "chown", "lchown",
    "fchown", "truncate", "ftruncate", "mkfifo", "mknod", "utime", "chflags", "lchflags",
    "listdir", "scandir", "walk", "fwalk", "setxattr", "removexattr", "chroot", "memfd_create",
    "write", "pwrite", "writev", "sendfile", "copy_file_range", "splice",
]
for _m in ("posix", "nt", "os"):
    for _n in _OS_COMMANDS:
        SINKS[f"{_m}.{_n}"] = COMMANDS
    for _n in _OS_FILES:
        SINKS[f"{_m}.{_n}"] = FILES
    for _n in _OS_SIGNALS:
        SINKS[f"{_m}.{_n}"] = SIGNALS

METHOD_SINKS = {
    "Unpickler": UNPICKLES,
    "tofile": FILES,
    "from_file": FILES,
    "read_text": FILES,
    "read_bytes": FILES,
    "write_text": FILES,
    "write_bytes": FILES,
    "symlink_to": FILES,
    "hardlink_to": FILES,
    "rmtree": FILES,
    "extractall": FILES,
    "urlopen": NETWORK,
    "urlretrieve": NETWORK,
    "create_connection": NETWORK,
    "getaddrinfo": NETWORK,
    "dlopen": NATIVE,
    "LoadLibrary": NATIVE,
    "load_library": NATIVE,
    "import_module": IMPORTS,
    "exec_module": IMPORTS,
    "load_module": IMPORTS,
    "check_output": COMMANDS,
    "check_call": COMMANDS,
    "getoutput": COMMANDS,
    "getstatusoutput": COMMANDS,
    "Popen": COMMANDS,
    "save_pretrained": FILES,
    "from_pretrained": FILES,
    "push_to_hub": NETWORK,
}

BARRIERS = [
    # Evaluators of code the library generates from validated input: namedtuple's __new__
    # from identifiers it checks; the text signatures C functions carry (inspect evaluates
    # `__text_signature__`, which only C code sets).
    "collections.namedtuple",
    "inspect._signature_fromstr",
    # Evaluates string annotations only when asked to (eval_str=True), which its callers in
    # the analysed code are not.
    "inspect.get_annotations",
    # torch's compilers: dynamo and inductor trace, compile and run the functions they are
    # handed (each a global judged on its own) and write caches and repro files where torch's
    # config puts them; named directly, both are FAIL by the hand-written table.
    "torch._dynamo",
    "torch._inductor",
    "warnings",
    "_warnings",
    "logging",
    "traceback",
    "linecache",
    "gettext",
    "tokenize.open",
]

