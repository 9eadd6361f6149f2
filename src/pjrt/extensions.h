// The PJRT extensions Kiln offers, chained from PJRT_Api.extension_start.
//
// Extension structs are not in pjrt_c_api.h; their layouts are declared here
// as the framework reads them (XLA's extension headers define the same
// fields in the same order).
#ifndef KILN_PJRT_EXTENSIONS_H_
#define KILN_PJRT_EXTENSIONS_H_

#include <stddef.h>
#include <stdint.h>

#include "pjrt_c_api.h"

extern "C" {

#define PJRT_API_SHARDINGS_EXTENSION_VERSION 1

// Shardings (PJRT_Extension_Type_Shardings): an executable's parameter and
// output shardings as serialized `xla.OpSharding` protos, owned by the
// executable; null arrays when it has none.
struct PJRT_Shardings_PJRT_Executable_ParameterShardings_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_parameters;         // out
  const char* const* shardings;  // out
  const size_t* sharding_sizes;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args, sharding_sizes);

struct PJRT_Shardings_PJRT_Executable_OutputShardings_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_outputs;            // out
  const char* const* shardings;  // out
  const size_t* sharding_sizes;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Shardings_PJRT_Executable_OutputShardings_Args,
                          sharding_sizes);

typedef PJRT_Error* PJRT_Shardings_PJRT_Executable_ParameterShardings(
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args* args);
typedef PJRT_Error* PJRT_Shardings_PJRT_Executable_OutputShardings(
    PJRT_Shardings_PJRT_Executable_OutputShardings_Args* args);

typedef struct PJRT_Shardings_Extension {
  PJRT_Extension_Base base;
  PJRT_Shardings_PJRT_Executable_ParameterShardings*
      PJRT_Shardings_PJRT_Executable_ParameterShardings;
  PJRT_Shardings_PJRT_Executable_OutputShardings*
      PJRT_Shardings_PJRT_Executable_OutputShardings;
} PJRT_Shardings_Extension;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Shardings_Extension,
                          PJRT_Shardings_PJRT_Executable_OutputShardings);

#define PJRT_API_FFI_EXTENSION_VERSION 2

// FFI (PJRT_Extension_Type_FFI): registration of XLA FFI handlers and user
// types, and user data for an execution (pjrt/ffi.cc).
struct PJRT_FFI_TypeID_Register_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* type_name;
  size_t type_name_size;
  int64_t type_id;  // in: 0 asks for a new id; out: the id
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_FFI_TypeID_Register_Args, type_id);

typedef struct PJRT_FFI_UserData {
  int64_t type_id;
  void* data;
  void (*deleter)(void* data);  // optional; called when the context goes
} PJRT_FFI_UserData;

struct PJRT_FFI_UserData_Add_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_ExecuteContext* context;
  PJRT_FFI_UserData user_data;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_FFI_UserData_Add_Args, user_data);

typedef enum PJRT_FFI_Handler_TraitsBits {
  PJRT_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0,
} PJRT_FFI_Handler_TraitsBits;

// No extension_start: the struct is laid out so in XLA's header.
struct PJRT_FFI_Register_Handler_Args {
  size_t struct_size;
  const char* target_name;
  size_t target_name_size;
  int api_version;  // 0: the legacy custom call; 1: the typed FFI
  void* handler;    // an XLA_FFI_Handler* (api_version 1)
  const char* platform_name;
  size_t platform_name_size;
  PJRT_FFI_Handler_TraitsBits traits;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_FFI_Register_Handler_Args, traits);

typedef PJRT_Error* PJRT_FFI_TypeID_Register(
    PJRT_FFI_TypeID_Register_Args* args);
typedef PJRT_Error* PJRT_FFI_UserData_Add(PJRT_FFI_UserData_Add_Args* args);
typedef PJRT_Error* PJRT_FFI_Register_Handler(
    PJRT_FFI_Register_Handler_Args* args);

typedef struct PJRT_FFI_Extension {
  PJRT_Extension_Base base;
  PJRT_FFI_TypeID_Register* type_id_register;
  PJRT_FFI_UserData_Add* user_data_add;
  PJRT_FFI_Register_Handler* register_handler;
} PJRT_FFI_Extension;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_FFI_Extension, register_handler);

// Profiler (PJRT_Extension_Type_Profiler, extension version 1): the
// plugin's half of a profiler session (pjrt/profiler.cc). The session's
// calls and their errors go through PLUGIN_Profiler_Api, whose layout is
// XLA's xla/backends/profiler/plugin/profiler_c_api.h (profiler API 1).
#define PJRT_API_PROFILER_EXTENSION_VERSION 1
#define PLUGIN_PROFILER_VERSION 1

#define KILN_PROFILER_STRUCT_SIZE(type, last) \
  (offsetof(type, last) + sizeof(((type*)0)->last))

typedef struct PLUGIN_Profiler PLUGIN_Profiler;
typedef struct PLUGIN_Profiler_Error PLUGIN_Profiler_Error;

struct PLUGIN_Profiler_Error_Destroy_Args {
  size_t struct_size;
  void* priv;
  PLUGIN_Profiler_Error* error;
};
typedef void PLUGIN_Profiler_Error_Destroy(
    PLUGIN_Profiler_Error_Destroy_Args* args);

struct PLUGIN_Profiler_Error_Message_Args {
  size_t struct_size;
  void* priv;
  const PLUGIN_Profiler_Error* error;
  const char* message;  // out, lives as long as `error`
  size_t message_size;  // out
};
typedef void PLUGIN_Profiler_Error_Message(
    PLUGIN_Profiler_Error_Message_Args* args);

struct PLUGIN_Profiler_Error_GetCode_Args {
  size_t struct_size;
  void* priv;
  const PLUGIN_Profiler_Error* error;
  int code;  // out
};
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Error_GetCode(
    PLUGIN_Profiler_Error_GetCode_Args* args);

struct PLUGIN_Profiler_Create_Args {
  size_t struct_size;
  const char* options;  // a serialized tensorflow.ProfileOptions
  size_t options_size;
  PLUGIN_Profiler* profiler;  // out
};
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Create(
    PLUGIN_Profiler_Create_Args* args);

struct PLUGIN_Profiler_Destroy_Args {
  size_t struct_size;
  PLUGIN_Profiler* profiler;
};
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Destroy(
    PLUGIN_Profiler_Destroy_Args* args);

struct PLUGIN_Profiler_Start_Args {
  size_t struct_size;
  PLUGIN_Profiler* profiler;
};
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Start(
    PLUGIN_Profiler_Start_Args* args);

struct PLUGIN_Profiler_Stop_Args {
  size_t struct_size;
  PLUGIN_Profiler* profiler;
};
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Stop(
    PLUGIN_Profiler_Stop_Args* args);

struct PLUGIN_Profiler_CollectData_Args {
  size_t struct_size;
  PLUGIN_Profiler* profiler;
  uint8_t* buffer;              // in/out
  size_t buffer_size_in_bytes;  // out
};
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_CollectData(
    PLUGIN_Profiler_CollectData_Args* args);

typedef struct PLUGIN_Profiler_Api {
  size_t struct_size;
  void* priv;
  PLUGIN_Profiler_Error_Destroy* error_destroy;
  PLUGIN_Profiler_Error_Message* error_message;
  PLUGIN_Profiler_Error_GetCode* error_get_code;
  PLUGIN_Profiler_Create* create;
  PLUGIN_Profiler_Destroy* destroy;
  PLUGIN_Profiler_Start* start;
  PLUGIN_Profiler_Stop* stop;
  PLUGIN_Profiler_CollectData* collect_data;
} PLUGIN_Profiler_Api;

typedef struct PJRT_Profiler_Extension {
  size_t struct_size;
  PJRT_Extension_Type type;
  PJRT_Extension_Base* next;
  PLUGIN_Profiler_Api* profiler_api;
  int64_t traceme_context_id;  // only when passed as an args extension
} PJRT_Profiler_Extension;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Profiler_Extension, traceme_context_id);

// Custom partitioner (PJRT_Extension_Type_Custom_Partitioner, extension
// version 1; pjrt/partitioner.cc): how a framework tells the SPMD
// partitioner about custom-call targets. The callbacks' layout is XLA's
// pjrt_c_api_custom_partitioner_extension.h.
#define PJRT_API_CUSTOM_PARTITIONER_EXTENSION_VERSION 1

struct JAX_CustomCallPartitioner_string {
  const char* data;
  size_t size;
};

struct JAX_CustomCallPartitioner_aval {
  JAX_CustomCallPartitioner_string shape;
  bool has_sharding;
  JAX_CustomCallPartitioner_string sharding;
};

struct JAX_CustomCallPartitioner_version_and_error {
  int64_t api_version;
  void* data;                      // out
  void (*cleanup_fn)(void* data);  // out
  bool has_error;
  PJRT_Error_Code code;                        // out
  JAX_CustomCallPartitioner_string error_msg;  // out
};

struct JAX_CustomCallPartitioner_Partition_Args {
  JAX_CustomCallPartitioner_version_and_error header;
  size_t num_args;
  JAX_CustomCallPartitioner_aval* op_args;
  JAX_CustomCallPartitioner_aval op_result;
  JAX_CustomCallPartitioner_string backend_config;
  JAX_CustomCallPartitioner_string mlir_module;       // out
  JAX_CustomCallPartitioner_string* args_sharding;    // out
  JAX_CustomCallPartitioner_string result_sharding;   // out
};

struct JAX_CustomCallPartitioner_InferShardingFromOperands_Args {
  JAX_CustomCallPartitioner_version_and_error header;
  size_t num_args;
  JAX_CustomCallPartitioner_aval* op_args;
  JAX_CustomCallPartitioner_string result_shape;
  JAX_CustomCallPartitioner_string backend_config;
  bool has_result_sharding;                           // out
  JAX_CustomCallPartitioner_string result_sharding;   // out
};

struct JAX_CustomCallPartitioner_PropagateUserSharding_Args {
  JAX_CustomCallPartitioner_version_and_error header;
  JAX_CustomCallPartitioner_string backend_config;
  JAX_CustomCallPartitioner_string result_shape;
  JAX_CustomCallPartitioner_string result_sharding;  // in/out
};

struct JAX_CustomCallPartitioner_Callbacks {
  int64_t version;
  void* private_data;
  void (*dtor)(JAX_CustomCallPartitioner_Callbacks* data);
  void (*partition)(JAX_CustomCallPartitioner_Callbacks* data,
                    JAX_CustomCallPartitioner_Partition_Args* args);
  void (*infer_sharding)(
      JAX_CustomCallPartitioner_Callbacks* data,
      JAX_CustomCallPartitioner_InferShardingFromOperands_Args* args);
  void (*propagate_user_sharding)(
      JAX_CustomCallPartitioner_Callbacks* data,
      JAX_CustomCallPartitioner_PropagateUserSharding_Args* args);
  bool can_side_effecting_have_replicated_sharding;
};

struct PJRT_Register_Custom_Partitioner_Args {
  size_t struct_size;
  const char* name;  // for the call only
  size_t name_size;
  JAX_CustomCallPartitioner_Callbacks* callbacks;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Register_Custom_Partitioner_Args, callbacks);

struct PJRT_Register_Batch_Partitionable_Args {
  size_t struct_size;
  const char* name;
  size_t name_size;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Register_Batch_Partitionable_Args, name_size);

typedef PJRT_Error* PJRT_Register_Custom_Partitioner(
    PJRT_Register_Custom_Partitioner_Args* args);
typedef PJRT_Error* PJRT_Register_Batch_Partitionable(
    PJRT_Register_Batch_Partitionable_Args* args);

typedef struct PJRT_Custom_Partitioner_Extension {
  size_t struct_size;
  PJRT_Extension_Type type;
  PJRT_Extension_Base* next;
  PJRT_Register_Custom_Partitioner* register_custom_partitioner;
  PJRT_Register_Batch_Partitionable* register_batch_partitionable;
} PJRT_Custom_Partitioner_Extension;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Custom_Partitioner_Extension,
                          register_batch_partitionable);

// Layouts (PJRT_Extension_Type_Layouts, extension version 4;
// pjrt/layouts_extension.cc): the device layouts of buffers and of an
// executable's parameters and outputs, as XLA's layout text ("{0,1}",
// minor-to-major) that PjRtLayout deserializes. Layouts from Buffer_ and
// *_GetDefaultLayout belong to the caller (MemoryLayout_Destroy);
// an executable's belong to it.
#define PJRT_API_LAYOUTS_EXTENSION_VERSION 4

typedef struct PJRT_Layouts_MemoryLayout PJRT_Layouts_MemoryLayout;
typedef struct PJRT_Layouts_SerializedLayout PJRT_Layouts_SerializedLayout;

struct PJRT_Layouts_MemoryLayout_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Layouts_MemoryLayout* layout;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Layouts_MemoryLayout_Destroy_Args, layout);

struct PJRT_Layouts_MemoryLayout_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Layouts_MemoryLayout* layout;
  const char* serialized_bytes;                      // out
  size_t serialized_bytes_size;                      // out
  PJRT_Layouts_SerializedLayout* serialized_layout;  // out
  void (*serialized_layout_deleter)(
      PJRT_Layouts_SerializedLayout* s_layout);  // out
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Layouts_MemoryLayout_Serialize_Args,
                          serialized_layout_deleter);

struct PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Layouts_MemoryLayout* layout;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args, layout);

struct PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_Buffer_Type type;
  const int64_t* dims;
  size_t num_dims;
  PJRT_Layouts_MemoryLayout* layout;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args,
                          layout);

struct PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_TopologyDescription* topology_description;
  PJRT_Buffer_Type type;
  const int64_t* dims;
  size_t num_dims;
  PJRT_Layouts_MemoryLayout* layout;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args,
                          layout);

struct PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_outputs;                  // out
  PJRT_Layouts_MemoryLayout** layouts;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args,
                          layouts);

struct PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_parameters;                // out
  PJRT_Layouts_MemoryLayout** layouts;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args,
                          layouts);

typedef struct PJRT_Layouts_Extension {
  PJRT_Extension_Base base;
  PJRT_Error* (*PJRT_Layouts_MemoryLayout_Destroy)(
      PJRT_Layouts_MemoryLayout_Destroy_Args* args);
  PJRT_Error* (*PJRT_Layouts_MemoryLayout_Serialize)(
      PJRT_Layouts_MemoryLayout_Serialize_Args* args);
  PJRT_Error* (*PJRT_Layouts_PJRT_Client_GetDefaultLayout)(
      PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args* args);
  PJRT_Error* (*PJRT_Layouts_PJRT_Buffer_MemoryLayout)(
      PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args* args);
  PJRT_Error* (*PJRT_Layouts_PJRT_Topology_GetDefaultLayout)(
      PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args* args);
  PJRT_Error* (*PJRT_Layouts_PJRT_Executable_GetOutputLayouts)(
      PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args* args);
  PJRT_Error* (*PJRT_Layouts_PJRT_Executable_GetParameterLayouts)(
      PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args* args);
} PJRT_Layouts_Extension;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Layouts_Extension,
                          PJRT_Layouts_PJRT_Executable_GetParameterLayouts);

}  // extern "C"

namespace kiln::pjrt {

// The first extension of Kiln's chain (PJRT_Api.extension_start).
PJRT_Extension_Base* ExtensionChain();

// The extensions after Shardings, each linking to the next: FFI
// (pjrt/ffi.cc), Profiler (pjrt/profiler.cc), Custom_Partitioner
// (pjrt/partitioner.cc), then Layouts (pjrt/layouts_extension.cc).
PJRT_Extension_Base* FfiExtension();
PJRT_Extension_Base* ProfilerExtension();
PJRT_Extension_Base* CustomPartitionerExtension();
PJRT_Extension_Base* LayoutsExtension();

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_EXTENSIONS_H_
