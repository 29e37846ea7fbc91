"""Writes ops-2.21.0.tsv: every op TensorFlow 2.21.0 registers, with the class socair's
tensorflow plugin judges it by (see OPS.md for each rule and its source).

    python registry.py > ops-2.21.0.tsv      # tensorflow-cpu==2.21.0 installed

The list of ops is the runtime's own registry (`TF_GetAllOpList`, the OpDefs every
`REGISTER_OP` in the wheel's kernels library declares), not a list typed by hand. Each op
gets one class:

  file        reads, writes or lists files (or maps them into memory): FAIL
  code        runs Python, or a graph the file does not show: FAIL
  net         reaches a network address the graph names: FAIL
  checkpoint  the checkpoint ops (SaveV2, RestoreV2, ...): PASS inside the saver's own
              subgraph over the loader's filename, FAIL anywhere else
  table-file  initializes a lookup table from a file: data when the file is one of the
              SavedModel's assets, FAIL otherwise
  print       PrintV2: FAIL when its output_stream is a file, else PASS
  debug       tfdbg's ops: FAIL when they name a debug URL (a file or a gRPC address)
  attr-file   an op whose KERNEL opens the file an attribute names, whatever its OpDef's
              statefulness says (DecodeProtoV2's descriptor_source...): FAIL unless the
              attribute holds the value that opens nothing
  cluster     talks to other devices or tasks of the cluster the runtime was given: LEAD
  state       a stateful op of the allow-list (variables, tables, iterators, random
              numbers, control flow and calls, queues, TensorArrays): PASS
  compute     stateless by its OpDef and none of the above: PASS
  lead        stateful and not on the allow-list: LEAD

An op the registry does not hold (a custom op from a library loaded with
tf.load_op_library) is a LEAD; a node whose op names a function of the graph's library is
judged by that function's body.
"""

import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf
from tensorflow.core.framework import op_def_pb2
from tensorflow.python.client import pywrap_tf_session as c_api

assert tf.__version__ == "2.21.0", tf.__version__

# Registry files cited in OPS.md, by class. ------------------------------------------------

# tensorflow/core/ops/io_ops.cc and friends: files read, written or listed.
FILE = {
    "ReadFile": "io_ops.cc: reads the file its `filename` input names",
    "WriteFile": "io_ops.cc: writes the file its `filename` input names",
    "MatchingFiles": "io_ops.cc: lists the files a glob `pattern` matches",
    "ImmutableConst": "array_ops.cc: memory-maps the region its `memory_region_name` attr names (a file path)",
    "LoadAndRemapMatrix": "checkpoint_ops.cc: reads the checkpoint its `ckpt_path` input names",
    "GenerateVocabRemapping": "checkpoint_ops.cc: reads the vocabulary files its inputs name",
    "Skipgram": "word2vec_ops.cc: reads the text file its `filename` attr names",
    "FileSystemSetConfiguration": "filesystem_ops.cc: reconfigures a file system (credentials, endpoints)",
    "RecordInput": "data_flow_ops.cc: reads the record files its `file_pattern` attr matches",
    "DumpTensor": "writes the tensor to the file its `file_name` attr names",
    "CalibrationStatisticsSaver": "writes calibration statistics to its `output_file_path` attr",
    "DatasetFromGraph": None,  # code, below
}
for r in ["TextLineReader", "TextLineReaderV2", "TFRecordReader", "TFRecordReaderV2",
          "WholeFileReader", "WholeFileReaderV2", "FixedLengthRecordReader",
          "FixedLengthRecordReaderV2", "LMDBReader"]:
    FILE[r] = "io_ops.cc: a reader that opens the files its work queue names"
for r in ["ReaderRead", "ReaderReadV2", "ReaderReadUpTo", "ReaderReadUpToV2",
          "ReaderRestoreState", "ReaderRestoreStateV2"]:
    FILE[r] = "io_ops.cc: reads records from the files a reader opens"
for d in ["TFRecordDataset", "TFRecordDatasetV2", "FixedLengthRecordDataset",
          "FixedLengthRecordDatasetV2", "TextLineDataset"]:
    FILE[d] = "dataset_ops.cc: reads the files its `filenames` input names"
for d in ["CacheDataset", "CacheDatasetV2"]:
    FILE[d] = "dataset_ops.cc: writes and reads a cache in the file its `filename` input names (an empty name caches in memory)"
for d in ["CSVDataset", "CSVDatasetV2", "ExperimentalCSVDataset", "LMDBDataset",
          "ExperimentalLMDBDataset"]:
    FILE[d] = "experimental_dataset_ops.cc: reads the files its `filenames` input names"
for d in ["SqlDataset", "ExperimentalSqlDataset"]:
    FILE[d] = "experimental_dataset_ops.cc: opens the SQLite database its `data_source_name` input names"
for d in ["MatchingFilesDataset", "ExperimentalMatchingFilesDataset"]:
    FILE[d] = "experimental_dataset_ops.cc: lists the files its `patterns` input matches"
for d in ["LoadDataset"]:
    FILE[d] = "experimental_dataset_ops.cc: reads a saved dataset from its `path` input"
for d in ["SaveDataset", "SaveDatasetV2", "DatasetToTFRecord", "ExperimentalDatasetToTFRecord"]:
    FILE[d] = "experimental_dataset_ops.cc: writes the dataset to the path its input names"
for d in ["SnapshotDataset", "SnapshotDatasetV2", "SnapshotDatasetReader",
          "SnapshotNestedDatasetReader", "SnapshotChunkDataset", "ListSnapshotChunksDataset"]:
    FILE[d] = "experimental_dataset_ops.cc: writes or reads snapshot files under the path its input names"
FILE["DistributedSave"] = "experimental_dataset_ops.cc: writes the dataset under `directory` through the tf.data service at `address`"
for s in ["CreateSummaryFileWriter", "CreateSummaryDbWriter", "WriteSummary", "WriteRawProtoSummary",
          "WriteScalarSummary", "WriteHistogramSummary", "WriteImageSummary", "WriteAudioSummary",
          "WriteGraphSummary", "ImportEvent", "FlushSummaryWriter", "CloseSummaryWriter",
          "SummaryWriter", "StatsAggregatorSetSummaryWriter"]:
    FILE[s] = "summary_ops.cc: writes TensorBoard event files (or a database) where its writer points"
del FILE["DatasetFromGraph"]

CODE = {
    "PyFunc": "script_ops.cc: calls a Python function registered in the process (tf.numpy_function, tf.compat.v1.py_func)",
    "PyFuncStateless": "script_ops.cc: calls a Python function registered in the process",
    "EagerPyFunc": "script_ops.cc: calls a Python function registered in the process (tf.py_function)",
    "DatasetFromGraph": "experimental_dataset_ops.cc: runs a serialized GraphDef given as a tensor at run time, which this file's graph does not show",
}

NET = {
    "RemoteCall": None,  # cluster, below
    "RpcServer": "rpc_ops.cc: starts a gRPC server at the `server_address` input",
    "RpcClient": "rpc_ops.cc: connects to the gRPC server at the `server_address` input",
    "RpcServerStart": "rpc_ops.cc: starts an RPC server",
    "RpcServerRegister": "rpc_ops.cc: registers a function an RPC server serves",
    "RpcCall": "rpc_ops.cc: calls a remote function over gRPC",
    "RpcCheckStatus": "rpc_ops.cc: waits on a remote call",
    "RpcGetValue": "rpc_ops.cc: waits on a remote call",
    "DeleteRpcFutureResource": "rpc_ops.cc: an RPC call's future",
    "RegisterDataset": "data_service_ops.cc: registers a dataset with the tf.data service at `address`",
    "RegisterDatasetV2": "data_service_ops.cc: registers a dataset with the tf.data service at `address`",
}
for d in ["DataServiceDataset", "DataServiceDatasetV2", "DataServiceDatasetV3", "DataServiceDatasetV4"]:
    NET[d] = "data_service_ops.cc: reads from the tf.data service at its `address` input"
del NET["RemoteCall"]

CHECKPOINT = {
    "SaveV2": "io_ops.cc: writes a checkpoint shard at its `prefix` input",
    "RestoreV2": "io_ops.cc: reads tensors from the checkpoint at its `prefix` input",
    "MergeV2Checkpoints": "io_ops.cc: merges checkpoint shards into `destination_prefix` and deletes them",
    "Save": "io_ops.cc: writes a (V1) checkpoint to its `filename` input",
    "SaveSlices": "io_ops.cc: writes a (V1) checkpoint to its `filename` input",
    "Restore": "io_ops.cc: reads a (V1) checkpoint matching its `file_pattern` input",
    "RestoreSlice": "io_ops.cc: reads a (V1) checkpoint matching its `file_pattern` input",
    "DTensorRestoreV2": "reads tensors from the checkpoint at its `prefix` input",
}

TABLE_FILE = {
    "InitializeTableFromTextFile": "lookup_ops.cc: fills a table from the text file its `filename` input names",
    "InitializeTableFromTextFileV2": "lookup_ops.cc: fills a table from the text file its `filename` input names",
}

PRINT = {"PrintV2": "logging_ops.cc: prints to its `output_stream` attr, which may be `file://<path>` (appends to that file)"}

DEBUG = {}
for d in ["DebugIdentity", "DebugIdentityV2", "DebugIdentityV3", "DebugNanCount",
          "DebugNumericSummary", "DebugNumericSummaryV2"]:
    DEBUG[d] = "debug_ops.cc: tfdbg: sends the tensor to each `debug_urls` attr (file:// writes a dump, grpc:// connects)"

# Ops whose kernel opens the file an attribute names, found by reading the kernels of every
# `compute` or `state` op with a string attribute or a string input (TensorFlow 2.21.0,
# tensorflow/core/kernels/; the string inputs are parsed, decoded, summarized, joined, or name
# an in-process resource, and open nothing): "stateless by its OpDef" says nothing about I/O
# in a kernel's constructor. The attribute, and the value that
# opens nothing, are in ops.rs (`attr_file`).
ATTR_FILE = {
    "DecodeProtoV2": "decode_proto_op.cc (DecodeProtoOp's constructor, GetDescriptorPool in "
    "tensorflow/core/util/proto/descriptors.cc): a `descriptor_source` attr other than the "
    "registered pool `local://` is a file (or URL) the runtime opens (FileExists, then "
    "NewReadOnlyMemoryRegionFromFile); stateless by its OpDef",
    "EncodeProto": "encode_proto_op.cc (EncodeProtoOp's constructor, GetDescriptorPool in "
    "tensorflow/core/util/proto/descriptors.cc): a `descriptor_source` attr other than "
    "`local://` is a file (or URL) the runtime opens; stateless by its OpDef",
    "FixedUnigramCandidateSampler": "candidate_sampler_ops.cc, range_sampler.cc "
    "(FixedUnigramSampler::LoadFromFile): a non-empty `vocab_file` attr is a file the kernel "
    "reads (NewRandomAccessFile)",
}

CLUSTER_PREFIXES = ("Collective", "_Nccl", "Nccl", "_Send", "_Recv", "_HostSend", "_HostRecv",
                    "XlaSend", "XlaRecv", "_XlaSend", "_XlaRecv", "Send", "Recv")
CLUSTER_EXTRA = {"RemoteCall": "functional_ops.cc: runs a function on the device its `target` input names, which may be another task of the cluster"}

# The allow-list of stateful ops: state the graph keeps in memory, and control flow.
STATE_PATTERNS = [
    r"^(Var|VarHandleOp|VarIsInitializedOp|ReadVariableOp|AssignVariableOp|AssignAddVariableOp|AssignSubVariableOp|DestroyResourceOp|DisableCopyOnRead|VariableShape|_ReadVariablesOp|_VarHandlesOp)$",
    r"^(Variable|VariableV2|TemporaryVariable|DestroyTemporaryVariable|Assign|AssignAdd|AssignSub|IsVariableInitialized|CountUpTo|ResourceCountUpTo)$",
    r"^(Resource(Gather|GatherNd|Scatter\w*|StridedSliceAssign|Apply\w*|SparseApply\w*))$",
    r"^(Scatter\w*|ApplyAdam|ApplyGradientDescent|Apply\w*|SparseApply\w*)$",
    r"^(HashTable|HashTableV2|MutableHashTable\w*|MutableDenseHashTable\w*|AnonymousHashTable|AnonymousMutable\w*|LookupTable\w*|InitializeTable|InitializeTableV2|InitializeTableFromDataset)$",
    r"^(StatefulPartitionedCall|PartitionedCall|If|StatelessIf|While|StatelessWhile|Case|StatelessCase|For|_If|_While|_Case|SymbolicGradient|NoOp|Placeholder|PlaceholderV2|PlaceholderWithDefault|ControlTrigger|Assert|Print|Timestamp|Stage\w*|Unstage|MapStage|MapUnstage\w*|MapPeek|MapSize|MapIncompleteSize|MapClear|OrderedMap\w*)$",
    r"^(Random\w*|ParameterizedTruncatedNormal|TruncatedNormal|Multinomial|StatefulRandomBinomial|StatefulStandardNormal\w*|StatefulTruncatedNormal|StatefulUniform\w*|NonDeterministicInts|RngSkip|RngReadAndSkip|AnonymousSeedGenerator|DeleteSeedGenerator|DummySeedGenerator|AnonymousRandomSeedGenerator|DeleteRandomSeedGenerator|ThreadUnsafeUnigramCandidateSampler|AllCandidateSampler|LearnedUnigramCandidateSampler|LogUniformCandidateSampler|UniformCandidateSampler|FixedUnigramCandidateSampler)$",
    r"^(TensorArray\w*|Stack\w*|FIFOQueue\w*|PaddingFIFOQueue\w*|PriorityQueue\w*|RandomShuffleQueue\w*|FakeQueue|Queue\w*|Barrier\w*|ConditionalAccumulator|SparseConditionalAccumulator|ResourceConditionalAccumulator|ResourceAccumulator\w*|Accumulator\w*|SparseAccumulator\w*|TensorList\w*|EmptyTensorList)$",
    r"^(Iterator\w*|AnonymousIterator\w*|MakeIterator|OneShotIterator|DeleteIterator|DeserializeIterator|SerializeIterator|MultiDeviceIterator\w*|AnonymousMultiDeviceIterator\w*|DeleteMultiDeviceIterator|OptionalFromValue|OptionalGetValue|OptionalHasValue|OptionalNone|ReduceDataset|DatasetToSingleElement|GeneratorDataset|RangeDataset|TensorDataset|TensorSliceDataset|SparseTensorSliceDataset|RandomDataset|RandomDatasetV2|ShuffleDatasetV2|ShuffleDatasetV3|ShuffleAndRepeatDatasetV2|GroupByReducerDataset|ExperimentalGroupByReducerDataset|ThreadPoolDataset|ExperimentalThreadPoolDataset|ThreadPoolHandle|ExperimentalThreadPoolHandle|ListDataset|GlobalShuffleDataset|AnonymousMemoryCache|DeleteMemoryCache|DummyMemoryCache|ExperimentalRandomDataset|WindowOp|ExperimentalIteratorGetDevice|IteratorGetDevice)$",
    r"^(CriticalSectionExecute|MutexV2|MutexLock|ConsumeMutexLock|XlaLaunch|_XlaCompile|_XlaRun|XlaClusterOutput|_Arg|_Retval|_DeviceArg|_DeviceRetval|Enter|Exit|Merge|Switch|NextIteration|LoopCond|RefEnter|RefExit|RefMerge|RefSwitch|RefNextIteration|RefSelect|Abort|CheckNumerics|CheckNumericsV2|StatelessRandom\w*|BoostedTrees\w*)$",
    # cuDNN's recurrent kernels (Keras' LSTM and GRU layers trace a GPU branch), and the
    # rest of what real models hold that only its random numbers or memory make stateful.
    r"^(CudnnRNN\w*|SampleDistortedBoundingBox\w*|Empty|DeepCopy|GuaranteeConst|IsTensorFloat32Enabled|DeviceIndex|_ParallelConcatStart|GetSessionHandle\w*|GetSessionTensor|DeleteSessionTensor)$",
]

# ------------------------------------------------------------------------------------------

def main():
    buf = c_api.TF_GetAllOpList()
    ol = op_def_pb2.OpList()
    ol.ParseFromString(c_api.TF_GetBuffer(buf))
    state = [re.compile(p) for p in STATE_PATTERNS]
    rows = []
    for op in sorted(ol.op, key=lambda o: o.name):
        n = op.name
        if n in CODE:
            c, why = "code", CODE[n]
        elif n in NET:
            c, why = "net", NET[n]
        elif n in CHECKPOINT:
            c, why = "checkpoint", CHECKPOINT[n]
        elif n in TABLE_FILE:
            c, why = "table-file", TABLE_FILE[n]
        elif n in PRINT:
            c, why = "print", PRINT[n]
        elif n in DEBUG:
            c, why = "debug", DEBUG[n]
        elif n in ATTR_FILE:
            c, why = "attr-file", ATTR_FILE[n]
        elif n in FILE:
            c, why = "file", FILE[n]
        elif n in CLUSTER_EXTRA:
            c, why = "cluster", CLUSTER_EXTRA[n]
        elif n.startswith(CLUSTER_PREFIXES):
            c, why = "cluster", "sends or receives tensors between devices or tasks of the cluster it runs in"
        elif any(p.match(n) for p in state):
            c, why = "state", "stateful, on the allow-list"
        elif not op.is_stateful:
            c, why = "compute", "stateless by its OpDef"
        else:
            c, why = "lead", "stateful, not on the allow-list"
        rows.append((n, c, why))
    # Every op named in the tables above must be in the registry (a typo would hide one).
    names = {r[0] for r in rows}
    for table in (FILE, CODE, NET, CHECKPOINT, TABLE_FILE, PRINT, DEBUG, ATTR_FILE):
        for n in table:
            if n not in names and n not in ("DumpTensor", "CalibrationStatisticsSaver"):
                print("not in the registry:", n, file=sys.stderr)
    print("# op\tclass\twhy  (TensorFlow %s, %d ops: written by registry.py)" % (tf.__version__, len(rows)))
    for r in rows:
        print("\t".join(r))


if __name__ == "__main__":
    main()
