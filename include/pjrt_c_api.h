/* Kiln's declaration of the PJRT C API, version 0.112.
 *
 * PJRT is the device API that JAX, TensorFlow and PyTorch/XLA load from a
 * plugin's `GetPjrtApi()`. This header declares the structs, enums, callback
 * types and the `PJRT_Api` function table exactly as version 0.112 lays them
 * out on x86-64 (LP64). It is written from the public header's facts: every
 * struct size, field offset, enumerator value and the order of the 138
 * `PJRT_Api` slots. tests/pjrt/abi_test.cc checks each of those facts,
 * line by line, against the measured tables in `shared/abi/`.
 *
 * Conventions (the same as PJRT's):
 * - Every argument struct begins with `struct_size` and `extension_start`.
 *   The caller sets `struct_size` to its `<Name>_STRUCT_SIZE`; a callee reads
 *   and writes only the fields that lie inside it.
 * - `<Name>_STRUCT_SIZE` is the offset of the struct's last field plus that
 *   field's size (padding after the last field is not part of the ABI).
 * - A function returns NULL on success or an error the caller owns and frees
 *   with `PJRT_Error_Destroy`.
 *
 * The semantics of each call are described in docs/pjrt.md.
 */
#ifndef KILN_PJRT_C_API_H_
#define KILN_PJRT_C_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PJRT_API_MAJOR 0
#define PJRT_API_MINOR 112

/* Size of a struct up to and including `last_field`. */
#define PJRT_STRUCT_SIZE(struct_type, last_field) \
  (offsetof(struct_type, last_field) + sizeof(((struct_type*)0)->last_field))

/* Declares `<name>_STRUCT_SIZE` for an argument struct. */
#define PJRT_DEFINE_STRUCT_TRAITS(sname, last_field) \
  enum { sname##_STRUCT_SIZE = PJRT_STRUCT_SIZE(sname, last_field) }

/* One slot of the `PJRT_Api` table: a pointer to the function type of the
 * same name. */
#define _PJRT_API_STRUCT_FIELD(fn_type) fn_type* fn_type

#ifdef __cplusplus
extern "C" {
#endif

/* typedef forward declarations */
typedef struct PJRT_Extension_Base PJRT_Extension_Base;
typedef struct PJRT_Api_Version PJRT_Api_Version;
typedef struct PJRT_Error_Destroy_Args PJRT_Error_Destroy_Args;
typedef struct PJRT_Error_Message_Args PJRT_Error_Message_Args;
typedef struct PJRT_Error_FunctionTable PJRT_Error_FunctionTable;
typedef struct PJRT_Error PJRT_Error;
typedef struct PJRT_Error_GetCode_Args PJRT_Error_GetCode_Args;
typedef struct PJRT_Error_ForEachPayload_Args PJRT_Error_ForEachPayload_Args;
typedef struct PJRT_NamedValue PJRT_NamedValue;
typedef struct PJRT_Plugin_Initialize_Args PJRT_Plugin_Initialize_Args;
typedef struct PJRT_Plugin_Attributes_Args PJRT_Plugin_Attributes_Args;
typedef struct PJRT_Event_Destroy_Args PJRT_Event_Destroy_Args;
typedef struct PJRT_Event_IsReady_Args PJRT_Event_IsReady_Args;
typedef struct PJRT_Event_Error_Args PJRT_Event_Error_Args;
typedef struct PJRT_Event_Await_Args PJRT_Event_Await_Args;
typedef struct PJRT_Event_OnReady_Args PJRT_Event_OnReady_Args;
typedef struct PJRT_Event_Create_Args PJRT_Event_Create_Args;
typedef struct PJRT_Event_Set_Args PJRT_Event_Set_Args;
typedef struct PJRT_Memory_FunctionTable PJRT_Memory_FunctionTable;
typedef struct PJRT_Memory PJRT_Memory;
typedef struct PJRT_KeyValueGetCallback_Args PJRT_KeyValueGetCallback_Args;
typedef struct PJRT_KeyValueTryGetCallback_Args PJRT_KeyValueTryGetCallback_Args;
typedef struct PJRT_KeyValuePutCallback_Args PJRT_KeyValuePutCallback_Args;
typedef struct PJRT_Client_Create_Args PJRT_Client_Create_Args;
typedef struct PJRT_Client_Destroy_Args PJRT_Client_Destroy_Args;
typedef struct PJRT_Client_PlatformName_Args PJRT_Client_PlatformName_Args;
typedef struct PJRT_Client_ProcessIndex_Args PJRT_Client_ProcessIndex_Args;
typedef struct PJRT_Client_PlatformVersion_Args PJRT_Client_PlatformVersion_Args;
typedef struct PJRT_Client_TopologyDescription_Args PJRT_Client_TopologyDescription_Args;
typedef struct PJRT_Client_Devices_Args PJRT_Client_Devices_Args;
typedef struct PJRT_Client_AddressableDevices_Args PJRT_Client_AddressableDevices_Args;
typedef struct PJRT_Client_LookupDevice_Args PJRT_Client_LookupDevice_Args;
typedef struct PJRT_Client_LookupAddressableDevice_Args PJRT_Client_LookupAddressableDevice_Args;
typedef struct PJRT_ProcessInfo PJRT_ProcessInfo;
typedef struct PJRT_Client_UpdateGlobalProcessInfo_Args PJRT_Client_UpdateGlobalProcessInfo_Args;
typedef struct PJRT_Client_AddressableMemories_Args PJRT_Client_AddressableMemories_Args;
typedef struct PJRT_Program PJRT_Program;
typedef struct PJRT_Client_Compile_Args PJRT_Client_Compile_Args;
typedef struct PJRT_Client_Load_Args PJRT_Client_Load_Args;
typedef struct PJRT_Client_DefaultDeviceAssignment_Args PJRT_Client_DefaultDeviceAssignment_Args;
typedef struct PJRT_Client_DmaMap_Args PJRT_Client_DmaMap_Args;
typedef struct PJRT_Client_DmaUnmap_Args PJRT_Client_DmaUnmap_Args;
typedef struct PJRT_AsyncHostToDeviceTransferManager_Destroy_Args PJRT_AsyncHostToDeviceTransferManager_Destroy_Args;
typedef struct PJRT_AsyncHostToDeviceTransferManager_TransferData_Args PJRT_AsyncHostToDeviceTransferManager_TransferData_Args;
typedef struct PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args;
typedef struct PJRT_AsyncHostToDeviceTransferManager_Device_Args PJRT_AsyncHostToDeviceTransferManager_Device_Args;
typedef struct PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args;
typedef struct PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args;
typedef struct PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args;
typedef struct PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args;
typedef struct PJRT_Buffer_MemoryLayout_Tiled PJRT_Buffer_MemoryLayout_Tiled;
typedef struct PJRT_Buffer_MemoryLayout_Strides PJRT_Buffer_MemoryLayout_Strides;
typedef struct PJRT_Buffer_MemoryLayout PJRT_Buffer_MemoryLayout;
typedef struct PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args;
typedef struct PJRT_Client_CreateUninitializedBuffer_Args PJRT_Client_CreateUninitializedBuffer_Args;
typedef struct PJRT_Client_CreateErrorBuffer_Args PJRT_Client_CreateErrorBuffer_Args;
typedef struct PJRT_Client_CreateAliasBuffer_Args PJRT_Client_CreateAliasBuffer_Args;
typedef struct PJRT_Client_FulfillAliasBuffer_Args PJRT_Client_FulfillAliasBuffer_Args;
typedef struct PJRT_Client_BufferFromHostBuffer_Args PJRT_Client_BufferFromHostBuffer_Args;
typedef struct PJRT_Client_CreateViewOfDeviceBuffer_Args PJRT_Client_CreateViewOfDeviceBuffer_Args;
typedef struct PJRT_ShapeSpec PJRT_ShapeSpec;
typedef struct PJRT_Client_CreateBuffersForAsyncHostToDevice_Args PJRT_Client_CreateBuffersForAsyncHostToDevice_Args;
typedef struct PJRT_DeviceDescription_Id_Args PJRT_DeviceDescription_Id_Args;
typedef struct PJRT_DeviceDescription_ProcessIndex_Args PJRT_DeviceDescription_ProcessIndex_Args;
typedef struct PJRT_DeviceDescription_Attributes_Args PJRT_DeviceDescription_Attributes_Args;
typedef struct PJRT_DeviceDescription_Kind_Args PJRT_DeviceDescription_Kind_Args;
typedef struct PJRT_DeviceDescription_DebugString_Args PJRT_DeviceDescription_DebugString_Args;
typedef struct PJRT_DeviceDescription_ToString_Args PJRT_DeviceDescription_ToString_Args;
typedef struct PJRT_Device_GetDescription_Args PJRT_Device_GetDescription_Args;
typedef struct PJRT_Device_IsAddressable_Args PJRT_Device_IsAddressable_Args;
typedef struct PJRT_Device_LocalHardwareId_Args PJRT_Device_LocalHardwareId_Args;
typedef struct PJRT_Device_AddressableMemories_Args PJRT_Device_AddressableMemories_Args;
typedef struct PJRT_Device_DefaultMemory_Args PJRT_Device_DefaultMemory_Args;
typedef struct PJRT_Device_MemoryStats_Args PJRT_Device_MemoryStats_Args;
typedef struct PJRT_Device_ClearMemoryStats_Args PJRT_Device_ClearMemoryStats_Args;
typedef struct PJRT_Device_PoisonExecution_Args PJRT_Device_PoisonExecution_Args;
typedef struct PJRT_Device_GetAttributes_Args PJRT_Device_GetAttributes_Args;
typedef struct PJRT_Device_CreateAsyncTrackingEvent_Args PJRT_Device_CreateAsyncTrackingEvent_Args;
typedef struct PJRT_AsyncTrackingEvent_Destroy_Args PJRT_AsyncTrackingEvent_Destroy_Args;
typedef struct PJRT_Memory_Id_Args PJRT_Memory_Id_Args;
typedef struct PJRT_Memory_Kind_Args PJRT_Memory_Kind_Args;
typedef struct PJRT_Memory_Kind_Id_Args PJRT_Memory_Kind_Id_Args;
typedef struct PJRT_Memory_DebugString_Args PJRT_Memory_DebugString_Args;
typedef struct PJRT_Memory_ToString_Args PJRT_Memory_ToString_Args;
typedef struct PJRT_Memory_AddressableByDevices_Args PJRT_Memory_AddressableByDevices_Args;
typedef struct PJRT_ExecuteContext_Create_Args PJRT_ExecuteContext_Create_Args;
typedef struct PJRT_ExecuteContext_Destroy_Args PJRT_ExecuteContext_Destroy_Args;
typedef struct PJRT_Executable_Destroy_Args PJRT_Executable_Destroy_Args;
typedef struct PJRT_LoadedExecutable_Destroy_Args PJRT_LoadedExecutable_Destroy_Args;
typedef struct PJRT_LoadedExecutable_GetExecutable_Args PJRT_LoadedExecutable_GetExecutable_Args;
typedef struct PJRT_LoadedExecutable_GetDeviceAssignment_Args PJRT_LoadedExecutable_GetDeviceAssignment_Args;
typedef struct PJRT_Executable_Name_Args PJRT_Executable_Name_Args;
typedef struct PJRT_Executable_NumReplicas_Args PJRT_Executable_NumReplicas_Args;
typedef struct PJRT_Executable_NumPartitions_Args PJRT_Executable_NumPartitions_Args;
typedef struct PJRT_LoadedExecutable_AddressableDevices_Args PJRT_LoadedExecutable_AddressableDevices_Args;
typedef struct PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args;
typedef struct PJRT_Executable_OptimizedProgram_Args PJRT_Executable_OptimizedProgram_Args;
typedef struct PJRT_LoadedExecutable_Delete_Args PJRT_LoadedExecutable_Delete_Args;
typedef struct PJRT_LoadedExecutable_IsDeleted_Args PJRT_LoadedExecutable_IsDeleted_Args;
typedef struct PJRT_SendCallbackInfo PJRT_SendCallbackInfo;
typedef struct PJRT_RecvCallbackInfo PJRT_RecvCallbackInfo;
typedef struct PJRT_HloOutputCallbackInfo PJRT_HloOutputCallbackInfo;
typedef struct PJRT_ExecuteOptions PJRT_ExecuteOptions;
typedef struct PJRT_LoadedExecutable_Execute_Args PJRT_LoadedExecutable_Execute_Args;
typedef struct PJRT_Executable_NumOutputs_Args PJRT_Executable_NumOutputs_Args;
typedef struct PJRT_Executable_SizeOfGeneratedCodeInBytes_Args PJRT_Executable_SizeOfGeneratedCodeInBytes_Args;
typedef struct PJRT_Executable_Fingerprint_Args PJRT_Executable_Fingerprint_Args;
typedef struct PJRT_Executable_GetCostAnalysis_Args PJRT_Executable_GetCostAnalysis_Args;
typedef struct PJRT_Executable_GetCompiledMemoryStats_Args PJRT_Executable_GetCompiledMemoryStats_Args;
typedef struct PJRT_Executable_OutputElementTypes_Args PJRT_Executable_OutputElementTypes_Args;
typedef struct PJRT_Executable_OutputDimensions_Args PJRT_Executable_OutputDimensions_Args;
typedef struct PJRT_Executable_ParameterMemoryKinds_Args PJRT_Executable_ParameterMemoryKinds_Args;
typedef struct PJRT_Executable_OutputMemoryKinds_Args PJRT_Executable_OutputMemoryKinds_Args;
typedef struct PJRT_Executable_Serialize_Args PJRT_Executable_Serialize_Args;
typedef struct PJRT_Executable_GetCompileOptions_Args PJRT_Executable_GetCompileOptions_Args;
typedef struct PJRT_LoadOptions PJRT_LoadOptions;
typedef struct PJRT_Executable_DeserializeAndLoad_Args PJRT_Executable_DeserializeAndLoad_Args;
typedef struct PJRT_LoadedExecutable_Fingerprint_Args PJRT_LoadedExecutable_Fingerprint_Args;
typedef struct PJRT_Buffer_Destroy_Args PJRT_Buffer_Destroy_Args;
typedef struct PJRT_Buffer_ElementType_Args PJRT_Buffer_ElementType_Args;
typedef struct PJRT_Buffer_Dimensions_Args PJRT_Buffer_Dimensions_Args;
typedef struct PJRT_Buffer_UnpaddedDimensions_Args PJRT_Buffer_UnpaddedDimensions_Args;
typedef struct PJRT_Buffer_DynamicDimensionIndices_Args PJRT_Buffer_DynamicDimensionIndices_Args;
typedef struct PJRT_Buffer_GetMemoryLayout_Args PJRT_Buffer_GetMemoryLayout_Args;
typedef struct PJRT_Buffer_ToHostBuffer_Args PJRT_Buffer_ToHostBuffer_Args;
typedef struct PJRT_Buffer_OnDeviceSizeInBytes_Args PJRT_Buffer_OnDeviceSizeInBytes_Args;
typedef struct PJRT_Buffer_Delete_Args PJRT_Buffer_Delete_Args;
typedef struct PJRT_Buffer_IsDeleted_Args PJRT_Buffer_IsDeleted_Args;
typedef struct PJRT_Buffer_CopyRawToHost_Args PJRT_Buffer_CopyRawToHost_Args;
typedef struct PJRT_Buffer_CopyRawToHostFuture_Callback_Args PJRT_Buffer_CopyRawToHostFuture_Callback_Args;
typedef struct PJRT_Buffer_CopyRawToHostFuture_Args PJRT_Buffer_CopyRawToHostFuture_Args;
typedef struct PJRT_Buffer_CopyToDevice_Args PJRT_Buffer_CopyToDevice_Args;
typedef struct PJRT_Buffer_CopyToMemory_Args PJRT_Buffer_CopyToMemory_Args;
typedef struct PJRT_Buffer_Bitcast_Args PJRT_Buffer_Bitcast_Args;
typedef struct PJRT_Buffer_IsOnCpu_Args PJRT_Buffer_IsOnCpu_Args;
typedef struct PJRT_Buffer_Device_Args PJRT_Buffer_Device_Args;
typedef struct PJRT_Buffer_Memory_Args PJRT_Buffer_Memory_Args;
typedef struct PJRT_Buffer_ReadyEvent_Args PJRT_Buffer_ReadyEvent_Args;
typedef struct PJRT_Buffer_UnsafePointer_Args PJRT_Buffer_UnsafePointer_Args;
typedef struct PJRT_Buffer_IncreaseExternalReferenceCount_Args PJRT_Buffer_IncreaseExternalReferenceCount_Args;
typedef struct PJRT_Buffer_DecreaseExternalReferenceCount_Args PJRT_Buffer_DecreaseExternalReferenceCount_Args;
typedef struct PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args;
typedef struct PJRT_Buffer_DonateWithControlDependency_Callback_Args PJRT_Buffer_DonateWithControlDependency_Callback_Args;
typedef struct PJRT_Buffer_DonateWithControlDependency_Args PJRT_Buffer_DonateWithControlDependency_Args;
typedef struct PJRT_CopyToDeviceStream_Destroy_Args PJRT_CopyToDeviceStream_Destroy_Args;
typedef struct PJRT_CopyToDeviceStream_AddChunk_Args PJRT_CopyToDeviceStream_AddChunk_Args;
typedef struct PJRT_CopyToDeviceStream_TotalBytes_Args PJRT_CopyToDeviceStream_TotalBytes_Args;
typedef struct PJRT_CopyToDeviceStream_GranuleSize_Args PJRT_CopyToDeviceStream_GranuleSize_Args;
typedef struct PJRT_CopyToDeviceStream_CurrentBytes_Args PJRT_CopyToDeviceStream_CurrentBytes_Args;
typedef struct PJRT_TopologyDescription_Create_Args PJRT_TopologyDescription_Create_Args;
typedef struct PJRT_TopologyDescription_Destroy_Args PJRT_TopologyDescription_Destroy_Args;
typedef struct PJRT_TopologyDescription_PlatformVersion_Args PJRT_TopologyDescription_PlatformVersion_Args;
typedef struct PJRT_TopologyDescription_PlatformName_Args PJRT_TopologyDescription_PlatformName_Args;
typedef struct PJRT_TopologyDescription_GetDeviceDescriptions_Args PJRT_TopologyDescription_GetDeviceDescriptions_Args;
typedef struct PJRT_TopologyDescription_Serialize_Args PJRT_TopologyDescription_Serialize_Args;
typedef struct PJRT_TopologyDescription_Deserialize_Args PJRT_TopologyDescription_Deserialize_Args;
typedef struct PJRT_TopologyDescription_Attributes_Args PJRT_TopologyDescription_Attributes_Args;
typedef struct PJRT_TopologyDescription_Fingerprint_Args PJRT_TopologyDescription_Fingerprint_Args;
typedef struct PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args;
typedef struct PJRT_TopologyDescription_GetMemorySpaceKindIds_Args PJRT_TopologyDescription_GetMemorySpaceKindIds_Args;
typedef struct PJRT_Compile_Args PJRT_Compile_Args;
typedef struct PJRT_Chunk PJRT_Chunk;
typedef struct PJRT_LogicalDeviceIds PJRT_LogicalDeviceIds;

/* opaque handles */
typedef struct PJRT_AsyncHostToDeviceTransferManager PJRT_AsyncHostToDeviceTransferManager;
typedef struct PJRT_AsyncTrackingEvent PJRT_AsyncTrackingEvent;
typedef struct PJRT_Buffer PJRT_Buffer;
typedef struct PJRT_Client PJRT_Client;
typedef struct PJRT_CopyToDeviceStream PJRT_CopyToDeviceStream;
typedef struct PJRT_Device PJRT_Device;
typedef struct PJRT_DeviceAssignmentSerialized PJRT_DeviceAssignmentSerialized;
typedef struct PJRT_DeviceDescription PJRT_DeviceDescription;
typedef struct PJRT_Device_Attributes PJRT_Device_Attributes;
typedef struct PJRT_Event PJRT_Event;
typedef struct PJRT_Executable PJRT_Executable;
typedef struct PJRT_ExecuteContext PJRT_ExecuteContext;
typedef struct PJRT_FulfillAliasBufferCallback PJRT_FulfillAliasBufferCallback;
typedef struct PJRT_LoadedExecutable PJRT_LoadedExecutable;
typedef struct PJRT_MultiSlice_Config PJRT_MultiSlice_Config;
typedef struct PJRT_SerializedCompileOptions PJRT_SerializedCompileOptions;
typedef struct PJRT_SerializedExecutable PJRT_SerializedExecutable;
typedef struct PJRT_SerializedTopology PJRT_SerializedTopology;
typedef struct PJRT_TopologyDescription PJRT_TopologyDescription;
typedef struct PJRT_Api PJRT_Api;

typedef enum {
  PJRT_Extension_Type_Gpu_Custom_Call = 0,
  PJRT_Extension_Type_Profiler = 1,
  PJRT_Extension_Type_Custom_Partitioner = 2,
  PJRT_Extension_Type_Stream = 3,
  PJRT_Extension_Type_Layouts = 4,
  PJRT_Extension_Type_FFI = 5,
  PJRT_Extension_Type_MemoryDescriptions = 6,
  PJRT_Extension_Type_Triton = 7,
  PJRT_Extension_Type_RawBuffer = 8,
  PJRT_Extension_Type_PhaseCompile = 9,
  PJRT_Extension_Type_Example = 10,
  PJRT_Extension_Type_Unknown = 11,
  PJRT_Extension_Type_CrossHostTransfers = 12,
  PJRT_Extension_Type_ExecutableMetadata = 13,
  PJRT_Extension_Type_Callback = 14,
  PJRT_Extension_Type_HostAllocator = 15,
  PJRT_Extension_Type_TpuTopology = 16,
  PJRT_Extension_Type_TpuExecutable = 17,
  PJRT_Extension_Type_Megascale = 18,
  PJRT_Extension_Type_Shardings = 19,
  PJRT_Extension_Type_AbiVersion = 20,
  PJRT_Extension_Type_Collectives = 21,
  PJRT_Extension_Type_MultiSlice = 22,
  PJRT_Extension_Type_HostMemoryAllocator = 23,
  PJRT_Extension_Type_XlaTransform = 24,
} PJRT_Extension_Type;

typedef enum {
  PJRT_Error_Code_OK = 0,
  PJRT_Error_Code_CANCELLED = 1,
  PJRT_Error_Code_UNKNOWN = 2,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
  PJRT_Error_Code_NOT_FOUND = 5,
  PJRT_Error_Code_ALREADY_EXISTS = 6,
  PJRT_Error_Code_PERMISSION_DENIED = 7,
  PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
  PJRT_Error_Code_FAILED_PRECONDITION = 9,
  PJRT_Error_Code_ABORTED = 10,
  PJRT_Error_Code_OUT_OF_RANGE = 11,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
  PJRT_Error_Code_UNAVAILABLE = 14,
  PJRT_Error_Code_DATA_LOSS = 15,
  PJRT_Error_Code_UNAUTHENTICATED = 16,
} PJRT_Error_Code;

typedef enum {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64 = 1,
  PJRT_NamedValue_kInt64List = 2,
  PJRT_NamedValue_kFloat = 3,
  PJRT_NamedValue_kBool = 4,
} PJRT_NamedValue_Type;

typedef enum {
  PJRT_ProcessState_kUnspecified = 0,
  PJRT_ProcessState_kUninitialized = 1,
  PJRT_ProcessState_kDisconnected = 2,
  PJRT_ProcessState_kConnected = 3,
  PJRT_ProcessState_kError = 4,
} PJRT_ProcessState;

typedef enum {
  PJRT_Buffer_Type_INVALID = 0,
  PJRT_Buffer_Type_PRED = 1,
  PJRT_Buffer_Type_S8 = 2,
  PJRT_Buffer_Type_S16 = 3,
  PJRT_Buffer_Type_S32 = 4,
  PJRT_Buffer_Type_S64 = 5,
  PJRT_Buffer_Type_U8 = 6,
  PJRT_Buffer_Type_U16 = 7,
  PJRT_Buffer_Type_U32 = 8,
  PJRT_Buffer_Type_U64 = 9,
  PJRT_Buffer_Type_F16 = 10,
  PJRT_Buffer_Type_F32 = 11,
  PJRT_Buffer_Type_F64 = 12,
  PJRT_Buffer_Type_BF16 = 13,
  PJRT_Buffer_Type_C64 = 14,
  PJRT_Buffer_Type_C128 = 15,
  PJRT_Buffer_Type_F8E5M2 = 16,
  PJRT_Buffer_Type_F8E4M3FN = 17,
  PJRT_Buffer_Type_F8E4M3B11FNUZ = 18,
  PJRT_Buffer_Type_F8E5M2FNUZ = 19,
  PJRT_Buffer_Type_F8E4M3FNUZ = 20,
  PJRT_Buffer_Type_S4 = 21,
  PJRT_Buffer_Type_U4 = 22,
  PJRT_Buffer_Type_TOKEN = 23,
  PJRT_Buffer_Type_S2 = 24,
  PJRT_Buffer_Type_U2 = 25,
  PJRT_Buffer_Type_F8E4M3 = 26,
  PJRT_Buffer_Type_F8E3M4 = 27,
  PJRT_Buffer_Type_F8E8M0FNU = 28,
  PJRT_Buffer_Type_F4E2M1FN = 29,
  PJRT_Buffer_Type_S1 = 30,
  PJRT_Buffer_Type_U1 = 31,
} PJRT_Buffer_Type;

typedef enum {
  PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
  PJRT_HostBufferSemantics_kImmutableZeroCopy = 2,
  PJRT_HostBufferSemantics_kMutableZeroCopy = 3,
} PJRT_HostBufferSemantics;

typedef enum {
  PJRT_Buffer_MemoryLayout_Type_Tiled = 0,
  PJRT_Buffer_MemoryLayout_Type_Strides = 1,
} PJRT_Buffer_MemoryLayout_Type;

typedef void PJRT_Error_Destroy(PJRT_Error_Destroy_Args *);
typedef void PJRT_Error_Message(PJRT_Error_Message_Args *);
typedef void (*PJRT_Error_PayloadVisitor)(const char *, size_t, const char *, size_t, void *);
typedef PJRT_Error *PJRT_Error_GetCode(PJRT_Error_GetCode_Args *);
typedef PJRT_Error *PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args *);
typedef PJRT_Error *(*PJRT_CallbackError)(PJRT_Error_Code, const char *, size_t);
typedef PJRT_Error *PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args *);
typedef PJRT_Error *PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args *);
typedef PJRT_Error *PJRT_Event_Destroy(PJRT_Event_Destroy_Args *);
typedef PJRT_Error *PJRT_Event_IsReady(PJRT_Event_IsReady_Args *);
typedef PJRT_Error *PJRT_Event_Error(PJRT_Event_Error_Args *);
typedef PJRT_Error *PJRT_Event_Await(PJRT_Event_Await_Args *);
typedef void (*PJRT_Event_OnReadyCallback)(PJRT_Error *, void *);
typedef PJRT_Error *PJRT_Event_OnReady(PJRT_Event_OnReady_Args *);
typedef PJRT_Error *PJRT_Event_Create(PJRT_Event_Create_Args *);
typedef PJRT_Error *PJRT_Event_Set(PJRT_Event_Set_Args *);
typedef void (*PJRT_KeyValueGetCallback_ValueDeleter)(char *);
typedef PJRT_Error *(*PJRT_KeyValueGetCallback)(PJRT_KeyValueGetCallback_Args *);
typedef void (*PJRT_KeyValueTryGetCallback_ValueDeleter)(char *);
typedef PJRT_Error *(*PJRT_KeyValueTryGetCallback)(PJRT_KeyValueTryGetCallback_Args *);
typedef PJRT_Error *(*PJRT_KeyValuePutCallback)(PJRT_KeyValuePutCallback_Args *);
typedef PJRT_Error *PJRT_Client_Create(PJRT_Client_Create_Args *);
typedef PJRT_Error *PJRT_Client_Destroy(PJRT_Client_Destroy_Args *);
typedef PJRT_Error *PJRT_Client_PlatformName(PJRT_Client_PlatformName_Args *);
typedef PJRT_Error *PJRT_Client_ProcessIndex(PJRT_Client_ProcessIndex_Args *);
typedef PJRT_Error *PJRT_Client_PlatformVersion(PJRT_Client_PlatformVersion_Args *);
typedef PJRT_Error *PJRT_Client_TopologyDescription(PJRT_Client_TopologyDescription_Args *);
typedef PJRT_Error *PJRT_Client_Devices(PJRT_Client_Devices_Args *);
typedef PJRT_Error *PJRT_Client_AddressableDevices(PJRT_Client_AddressableDevices_Args *);
typedef PJRT_Error *PJRT_Client_LookupDevice(PJRT_Client_LookupDevice_Args *);
typedef PJRT_Error *PJRT_Client_LookupAddressableDevice(PJRT_Client_LookupAddressableDevice_Args *);
typedef PJRT_Error *PJRT_Client_UpdateGlobalProcessInfo(PJRT_Client_UpdateGlobalProcessInfo_Args *);
typedef PJRT_Error *PJRT_Client_AddressableMemories(PJRT_Client_AddressableMemories_Args *);
typedef PJRT_Error *PJRT_Client_Compile(PJRT_Client_Compile_Args *);
typedef PJRT_Error *PJRT_Client_Load(PJRT_Client_Load_Args *);
typedef PJRT_Error *PJRT_Client_DefaultDeviceAssignment(PJRT_Client_DefaultDeviceAssignment_Args *);
typedef PJRT_Error *PJRT_Client_DmaMap(PJRT_Client_DmaMap_Args *);
typedef PJRT_Error *PJRT_Client_DmaUnmap(PJRT_Client_DmaUnmap_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_Destroy(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_TransferData(PJRT_AsyncHostToDeviceTransferManager_TransferData_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_Device(PJRT_AsyncHostToDeviceTransferManager_Device_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_BufferCount(PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_BufferSize(PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_SetBufferError(PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_AddMetadata(PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args *);
typedef PJRT_Error *PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args *);
typedef PJRT_Error *PJRT_Client_CreateUninitializedBuffer(PJRT_Client_CreateUninitializedBuffer_Args *);
typedef PJRT_Error *PJRT_Client_CreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args *);
typedef PJRT_Error *PJRT_Client_CreateAliasBuffer(PJRT_Client_CreateAliasBuffer_Args *);
typedef PJRT_Error *PJRT_Client_FulfillAliasBuffer(PJRT_Client_FulfillAliasBuffer_Args *);
typedef PJRT_Error *PJRT_Client_BufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args *);
typedef PJRT_Error *PJRT_Client_CreateViewOfDeviceBuffer(PJRT_Client_CreateViewOfDeviceBuffer_Args *);
typedef PJRT_Error *PJRT_Client_CreateBuffersForAsyncHostToDevice(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args *);
typedef PJRT_Error *PJRT_DeviceDescription_Id(PJRT_DeviceDescription_Id_Args *);
typedef PJRT_Error *PJRT_DeviceDescription_ProcessIndex(PJRT_DeviceDescription_ProcessIndex_Args *);
typedef PJRT_Error *PJRT_DeviceDescription_Attributes(PJRT_DeviceDescription_Attributes_Args *);
typedef PJRT_Error *PJRT_DeviceDescription_Kind(PJRT_DeviceDescription_Kind_Args *);
typedef PJRT_Error *PJRT_DeviceDescription_DebugString(PJRT_DeviceDescription_DebugString_Args *);
typedef PJRT_Error *PJRT_DeviceDescription_ToString(PJRT_DeviceDescription_ToString_Args *);
typedef PJRT_Error *PJRT_Device_GetDescription(PJRT_Device_GetDescription_Args *);
typedef PJRT_Error *PJRT_Device_IsAddressable(PJRT_Device_IsAddressable_Args *);
typedef PJRT_Error *PJRT_Device_LocalHardwareId(PJRT_Device_LocalHardwareId_Args *);
typedef PJRT_Error *PJRT_Device_AddressableMemories(PJRT_Device_AddressableMemories_Args *);
typedef PJRT_Error *PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args *);
typedef PJRT_Error *PJRT_Device_MemoryStats(PJRT_Device_MemoryStats_Args *);
typedef PJRT_Error *PJRT_Device_ClearMemoryStats(PJRT_Device_ClearMemoryStats_Args *);
typedef PJRT_Error *PJRT_Device_PoisonExecution(PJRT_Device_PoisonExecution_Args *);
typedef PJRT_Error *PJRT_Device_GetAttributes(PJRT_Device_GetAttributes_Args *);
typedef PJRT_Error *PJRT_Device_CreateAsyncTrackingEvent(PJRT_Device_CreateAsyncTrackingEvent_Args *);
typedef PJRT_Error *PJRT_AsyncTrackingEvent_Destroy(PJRT_AsyncTrackingEvent_Destroy_Args *);
typedef PJRT_Error *PJRT_Memory_Id(PJRT_Memory_Id_Args *);
typedef PJRT_Error *PJRT_Memory_Kind(PJRT_Memory_Kind_Args *);
typedef PJRT_Error *PJRT_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args *);
typedef PJRT_Error *PJRT_Memory_DebugString(PJRT_Memory_DebugString_Args *);
typedef PJRT_Error *PJRT_Memory_ToString(PJRT_Memory_ToString_Args *);
typedef PJRT_Error *PJRT_Memory_AddressableByDevices(PJRT_Memory_AddressableByDevices_Args *);
typedef PJRT_Error *PJRT_ExecuteContext_Create(PJRT_ExecuteContext_Create_Args *);
typedef PJRT_Error *PJRT_ExecuteContext_Destroy(PJRT_ExecuteContext_Destroy_Args *);
typedef PJRT_Error *PJRT_Executable_Destroy(PJRT_Executable_Destroy_Args *);
typedef PJRT_Error *PJRT_LoadedExecutable_Destroy(PJRT_LoadedExecutable_Destroy_Args *);
typedef PJRT_Error *PJRT_LoadedExecutable_GetExecutable(PJRT_LoadedExecutable_GetExecutable_Args *);
typedef PJRT_Error *PJRT_LoadedExecutable_GetDeviceAssignment(PJRT_LoadedExecutable_GetDeviceAssignment_Args *);
typedef PJRT_Error *PJRT_Executable_Name(PJRT_Executable_Name_Args *);
typedef PJRT_Error *PJRT_Executable_NumReplicas(PJRT_Executable_NumReplicas_Args *);
typedef PJRT_Error *PJRT_Executable_NumPartitions(PJRT_Executable_NumPartitions_Args *);
typedef PJRT_Error *PJRT_LoadedExecutable_AddressableDevices(PJRT_LoadedExecutable_AddressableDevices_Args *);
typedef PJRT_Error *PJRT_LoadedExecutable_AddressableDeviceLogicalIds(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args *);
typedef PJRT_Error *PJRT_Executable_OptimizedProgram(PJRT_Executable_OptimizedProgram_Args *);
typedef PJRT_Error *PJRT_LoadedExecutable_Delete(PJRT_LoadedExecutable_Delete_Args *);
typedef PJRT_Error *PJRT_LoadedExecutable_IsDeleted(PJRT_LoadedExecutable_IsDeleted_Args *);
typedef PJRT_Error *(*PJRT_SendCallback)(PJRT_Chunk *, PJRT_CallbackError *, size_t, bool, void *);
typedef void (*PJRT_RecvCallback)(PJRT_CopyToDeviceStream *, void *);
typedef void (*PJRT_HloOutputCallback)(int64_t, int64_t, const void *, const int64_t *, size_t, PJRT_Buffer_Type, int64_t, void *);
typedef PJRT_Error *PJRT_LoadedExecutable_Execute(PJRT_LoadedExecutable_Execute_Args *);
typedef PJRT_Error *PJRT_Executable_NumOutputs(PJRT_Executable_NumOutputs_Args *);
typedef PJRT_Error *PJRT_Executable_SizeOfGeneratedCodeInBytes(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args *);
typedef PJRT_Error *PJRT_Executable_Fingerprint(PJRT_Executable_Fingerprint_Args *);
typedef PJRT_Error *PJRT_Executable_GetCostAnalysis(PJRT_Executable_GetCostAnalysis_Args *);
typedef PJRT_Error *PJRT_Executable_GetCompiledMemoryStats(PJRT_Executable_GetCompiledMemoryStats_Args *);
typedef PJRT_Error *PJRT_Executable_OutputElementTypes(PJRT_Executable_OutputElementTypes_Args *);
typedef PJRT_Error *PJRT_Executable_OutputDimensions(PJRT_Executable_OutputDimensions_Args *);
typedef PJRT_Error *PJRT_Executable_ParameterMemoryKinds(PJRT_Executable_ParameterMemoryKinds_Args *);
typedef PJRT_Error *PJRT_Executable_OutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args *);
typedef PJRT_Error *PJRT_Executable_Serialize(PJRT_Executable_Serialize_Args *);
typedef PJRT_Error *PJRT_Executable_GetCompileOptions(PJRT_Executable_GetCompileOptions_Args *);
typedef PJRT_Error *PJRT_Executable_DeserializeAndLoad(PJRT_Executable_DeserializeAndLoad_Args *);
typedef PJRT_Error *PJRT_LoadedExecutable_Fingerprint(PJRT_LoadedExecutable_Fingerprint_Args *);
typedef PJRT_Error *PJRT_Buffer_Destroy(PJRT_Buffer_Destroy_Args *);
typedef PJRT_Error *PJRT_Buffer_ElementType(PJRT_Buffer_ElementType_Args *);
typedef PJRT_Error *PJRT_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args *);
typedef PJRT_Error *PJRT_Buffer_UnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args *);
typedef PJRT_Error *PJRT_Buffer_DynamicDimensionIndices(PJRT_Buffer_DynamicDimensionIndices_Args *);
typedef PJRT_Error *PJRT_Buffer_GetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args *);
typedef PJRT_Error *PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args *);
typedef PJRT_Error *PJRT_Buffer_OnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args *);
typedef PJRT_Error *PJRT_Buffer_Delete(PJRT_Buffer_Delete_Args *);
typedef PJRT_Error *PJRT_Buffer_IsDeleted(PJRT_Buffer_IsDeleted_Args *);
typedef PJRT_Error *PJRT_Buffer_CopyRawToHost(PJRT_Buffer_CopyRawToHost_Args *);
typedef PJRT_Error *PJRT_Buffer_CopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args *);
typedef PJRT_Error *PJRT_Buffer_CopyToDevice(PJRT_Buffer_CopyToDevice_Args *);
typedef PJRT_Error *PJRT_Buffer_CopyToMemory(PJRT_Buffer_CopyToMemory_Args *);
typedef PJRT_Error *PJRT_Buffer_Bitcast(PJRT_Buffer_Bitcast_Args *);
typedef PJRT_Error *PJRT_Buffer_IsOnCpu(PJRT_Buffer_IsOnCpu_Args *);
typedef PJRT_Error *PJRT_Buffer_Device(PJRT_Buffer_Device_Args *);
typedef PJRT_Error *PJRT_Buffer_Memory(PJRT_Buffer_Memory_Args *);
typedef PJRT_Error *PJRT_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args *);
typedef PJRT_Error *PJRT_Buffer_UnsafePointer(PJRT_Buffer_UnsafePointer_Args *);
typedef PJRT_Error *PJRT_Buffer_IncreaseExternalReferenceCount(PJRT_Buffer_IncreaseExternalReferenceCount_Args *);
typedef PJRT_Error *PJRT_Buffer_DecreaseExternalReferenceCount(PJRT_Buffer_DecreaseExternalReferenceCount_Args *);
typedef PJRT_Error *PJRT_Buffer_OpaqueDeviceMemoryDataPointer(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args *);
typedef PJRT_Error *PJRT_Buffer_DonateWithControlDependency(PJRT_Buffer_DonateWithControlDependency_Args *);
typedef PJRT_Error *PJRT_CopyToDeviceStream_Destroy(PJRT_CopyToDeviceStream_Destroy_Args *);
typedef PJRT_Error *PJRT_CopyToDeviceStream_AddChunk(PJRT_CopyToDeviceStream_AddChunk_Args *);
typedef PJRT_Error *PJRT_CopyToDeviceStream_TotalBytes(PJRT_CopyToDeviceStream_TotalBytes_Args *);
typedef PJRT_Error *PJRT_CopyToDeviceStream_GranuleSize(PJRT_CopyToDeviceStream_GranuleSize_Args *);
typedef PJRT_Error *PJRT_CopyToDeviceStream_CurrentBytes(PJRT_CopyToDeviceStream_CurrentBytes_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_Create(PJRT_TopologyDescription_Create_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_Destroy(PJRT_TopologyDescription_Destroy_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_PlatformVersion(PJRT_TopologyDescription_PlatformVersion_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_PlatformName(PJRT_TopologyDescription_PlatformName_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_GetDeviceDescriptions(PJRT_TopologyDescription_GetDeviceDescriptions_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_Serialize(PJRT_TopologyDescription_Serialize_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_Deserialize(PJRT_TopologyDescription_Deserialize_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_Attributes(PJRT_TopologyDescription_Attributes_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_Fingerprint(PJRT_TopologyDescription_Fingerprint_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args *);
typedef PJRT_Error *PJRT_TopologyDescription_GetMemorySpaceKindIds(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args *);
typedef PJRT_Error *PJRT_Compile(PJRT_Compile_Args *);

struct PJRT_Extension_Base {
  size_t struct_size;
  PJRT_Extension_Type type;
  struct PJRT_Extension_Base *next;
};

struct PJRT_Api_Version {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  int major_version;
  int minor_version;
};

struct PJRT_Error_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Error *error;
};

struct PJRT_Error_Message_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  const char *message;
  size_t message_size;
};

struct PJRT_Error_FunctionTable {
  size_t struct_size;
  size_t instance_size;
  PJRT_Extension_Base *extension_start;
  void (*destroy)(PJRT_Error *);
  void (*message)(const PJRT_Error *, const char **, size_t *);
  PJRT_Error_Code (*get_code)(const PJRT_Error *);
  void (*for_each_payload)(const PJRT_Error *, PJRT_Error_PayloadVisitor, void *);
};

struct PJRT_Error {
  const struct PJRT_Error_FunctionTable *vtable;
};

struct PJRT_Error_GetCode_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  PJRT_Error_Code code;
};

struct PJRT_Error_ForEachPayload_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  PJRT_Error_PayloadVisitor visitor;
  void *user_arg;
};

struct PJRT_NamedValue {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const char *name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char *string_value;
    int64_t int64_value;
    const int64_t *int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size;
};

struct PJRT_Plugin_Initialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
};

struct PJRT_Plugin_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_NamedValue *attributes;
  size_t num_attributes;
};

struct PJRT_Event_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

struct PJRT_Event_IsReady_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
  bool is_ready;
};

struct PJRT_Event_Error_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

struct PJRT_Event_Await_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

struct PJRT_Event_OnReady_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
  PJRT_Event_OnReadyCallback callback;
  void *user_arg;
};

struct PJRT_Event_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

struct PJRT_Event_Set_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
  PJRT_Error_Code error_code;
  const char *error_message;
  size_t error_message_size;
};

struct PJRT_Memory_FunctionTable {
  size_t struct_size;
  struct PJRT_Extension_Base *extension_start;
  size_t instance_struct_size;
  void *(*get_user_data)(struct PJRT_Memory *, const void *);
  void (*set_user_data)(struct PJRT_Memory *, const void *, void *, void (*)(void *));
};

struct PJRT_Memory {
  const struct PJRT_Memory_FunctionTable *vtable;
};

struct PJRT_KeyValueGetCallback_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const char *key;
  size_t key_size;
  int timeout_in_ms;
  PJRT_CallbackError *callback_error;
  void *user_arg;
  char *value;
  size_t value_size;
  PJRT_KeyValueGetCallback_ValueDeleter value_deleter_callback;
};

struct PJRT_KeyValueTryGetCallback_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const char *key;
  size_t key_size;
  PJRT_CallbackError *callback_error;
  void *user_arg;
  char *value;
  size_t value_size;
  PJRT_KeyValueTryGetCallback_ValueDeleter value_deleter_callback;
};

struct PJRT_KeyValuePutCallback_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const char *key;
  size_t key_size;
  const char *value;
  size_t value_size;
  PJRT_CallbackError *callback_error;
  void *user_arg;
};

struct PJRT_Client_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_NamedValue *create_options;
  size_t num_options;
  PJRT_KeyValueGetCallback kv_get_callback;
  void *kv_get_user_arg;
  PJRT_KeyValuePutCallback kv_put_callback;
  void *kv_put_user_arg;
  PJRT_Client *client;
  PJRT_KeyValueTryGetCallback kv_try_get_callback;
  void *kv_try_get_user_arg;
};

struct PJRT_Client_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
};

struct PJRT_Client_PlatformName_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const char *platform_name;
  size_t platform_name_size;
};

struct PJRT_Client_ProcessIndex_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  int process_index;
};

struct PJRT_Client_PlatformVersion_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const char *platform_version;
  size_t platform_version_size;
};

struct PJRT_Client_TopologyDescription_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_TopologyDescription *topology;
};

struct PJRT_Client_Devices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Device *const *devices;
  size_t num_devices;
};

struct PJRT_Client_AddressableDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Device *const *addressable_devices;
  size_t num_addressable_devices;
};

struct PJRT_Client_LookupDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  int id;
  PJRT_Device *device;
};

struct PJRT_Client_LookupAddressableDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  int local_hardware_id;
  PJRT_Device *addressable_device;
};

struct PJRT_ProcessInfo {
  size_t struct_size;
  int task_id;
  uint64_t incarnation_id;
  PJRT_ProcessState state;
  int error_code;
  const char *error_message;
  size_t error_message_size;
};

struct PJRT_Client_UpdateGlobalProcessInfo_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_ProcessInfo *process_infos;
  size_t num_process_infos;
};

struct PJRT_Client_AddressableMemories_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Memory *const *addressable_memories;
  size_t num_addressable_memories;
};

struct PJRT_Program {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  char *code;
  size_t code_size;
  const char *format;
  size_t format_size;
};

struct PJRT_Client_Compile_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const PJRT_Program *program;
  const char *compile_options;
  size_t compile_options_size;
  PJRT_LoadedExecutable *executable;
};

struct PJRT_Client_Load_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Executable *executable;
  const char *compile_options;
  size_t compile_options_size;
  PJRT_LoadedExecutable *loaded_executable;
};

struct PJRT_Client_DefaultDeviceAssignment_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  int num_replicas;
  int num_partitions;
  size_t default_assignment_size;
  int *default_assignment;
};

struct PJRT_Client_DmaMap_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  void *data;
  size_t size;
};

struct PJRT_Client_DmaUnmap_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  void *data;
};

struct PJRT_AsyncHostToDeviceTransferManager_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
};

struct PJRT_AsyncHostToDeviceTransferManager_TransferData_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
  int buffer_index;
  const void *data;
  int64_t offset;
  int64_t transfer_size;
  bool is_last_transfer;
  PJRT_Event *done_with_h2d_transfer;
};

struct PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
  int buffer_index;
  PJRT_Buffer *buffer_out;
};

struct PJRT_AsyncHostToDeviceTransferManager_Device_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
  PJRT_Device *device_out;
};

struct PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
  size_t buffer_count;
};

struct PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
  int buffer_index;
  size_t buffer_size;
};

struct PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
  int buffer_index;
  PJRT_Error_Code error_code;
  const char *error_message;
  size_t error_message_size;
};

struct PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
  const PJRT_NamedValue *transfer_metadata;
  size_t num_metadata;
};

struct PJRT_Buffer_MemoryLayout_Tiled {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const int64_t *minor_to_major;
  size_t minor_to_major_size;
  const int64_t *tile_dims;
  const size_t *tile_dim_sizes;
  size_t num_tiles;
};

struct PJRT_Buffer_MemoryLayout_Strides {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const int64_t *byte_strides;
  size_t num_byte_strides;
};

struct PJRT_Buffer_MemoryLayout {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  union {
    struct PJRT_Buffer_MemoryLayout_Tiled tiled;
    struct PJRT_Buffer_MemoryLayout_Strides strides;
  };
  PJRT_Buffer_MemoryLayout_Type type;
};

struct PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
  int buffer_index;
  const void *data;
  const int64_t *shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout *shape_layout;
  PJRT_Event *done_with_h2d_transfer;
};

struct PJRT_Client_CreateUninitializedBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const int64_t *shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout *shape_layout;
  PJRT_Device *device;
  PJRT_Memory *memory;
  PJRT_Buffer *buffer;
};

struct PJRT_Client_CreateErrorBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Error_Code error_code;
  const char *error_message;
  size_t error_message_size;
  const int64_t *shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout *shape_layout;
  PJRT_Memory *memory;
  PJRT_Buffer *buffer;
  const PJRT_NamedValue *payload;
  size_t num_payload;
};

struct PJRT_Client_CreateAliasBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Memory *memory;
  const int64_t *shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout *shape_layout;
  PJRT_Buffer *alias_buffer;
  PJRT_FulfillAliasBufferCallback *fulfill_alias_buffer_cb;
};

struct PJRT_Client_FulfillAliasBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Buffer *buffer;
  PJRT_Error_Code status_code;
  const char *error_message;
  size_t error_message_size;
  PJRT_FulfillAliasBufferCallback *fulfill_alias_buffer_cb;
};

struct PJRT_Client_BufferFromHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const void *data;
  PJRT_Buffer_Type type;
  const int64_t *dims;
  size_t num_dims;
  const int64_t *byte_strides;
  size_t num_byte_strides;
  PJRT_HostBufferSemantics host_buffer_semantics;
  PJRT_Device *device;
  PJRT_Memory *memory;
  PJRT_Buffer_MemoryLayout *device_layout;
  PJRT_Event *done_with_host_buffer;
  PJRT_Buffer *buffer;
};

struct PJRT_Client_CreateViewOfDeviceBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  void *device_buffer_ptr;
  const int64_t *dims;
  size_t num_dims;
  PJRT_Buffer_Type element_type;
  PJRT_Buffer_MemoryLayout *layout;
  PJRT_Device *device;
  void (*on_delete_callback)(void *, void *);
  void *on_delete_callback_arg;
  intptr_t stream;
  PJRT_Buffer *buffer;
  PJRT_Memory *memory;
};

struct PJRT_ShapeSpec {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const int64_t *dims;
  size_t num_dims;
  PJRT_Buffer_Type element_type;
};

struct PJRT_Client_CreateBuffersForAsyncHostToDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_ShapeSpec *shape_specs;
  size_t num_shape_specs;
  PJRT_Buffer_MemoryLayout **device_layouts;
  size_t num_device_layouts;
  PJRT_Memory *memory;
  PJRT_AsyncHostToDeviceTransferManager *transfer_manager;
};

struct PJRT_DeviceDescription_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  int id;
};

struct PJRT_DeviceDescription_ProcessIndex_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  int process_index;
};

struct PJRT_DeviceDescription_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  size_t num_attributes;
  const PJRT_NamedValue *attributes;
};

struct PJRT_DeviceDescription_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  const char *device_kind;
  size_t device_kind_size;
};

struct PJRT_DeviceDescription_DebugString_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  const char *debug_string;
  size_t debug_string_size;
};

struct PJRT_DeviceDescription_ToString_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  const char *to_string;
  size_t to_string_size;
};

struct PJRT_Device_GetDescription_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  PJRT_DeviceDescription *device_description;
};

struct PJRT_Device_IsAddressable_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  bool is_addressable;
};

struct PJRT_Device_LocalHardwareId_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  int local_hardware_id;
};

struct PJRT_Device_AddressableMemories_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  PJRT_Memory *const *memories;
  size_t num_memories;
};

struct PJRT_Device_DefaultMemory_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  PJRT_Memory *memory;
};

struct PJRT_Device_MemoryStats_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  bool peak_bytes_in_use_is_set;
  int64_t num_allocs;
  bool num_allocs_is_set;
  int64_t largest_alloc_size;
  bool largest_alloc_size_is_set;
  int64_t bytes_limit;
  bool bytes_limit_is_set;
  int64_t bytes_reserved;
  bool bytes_reserved_is_set;
  int64_t peak_bytes_reserved;
  bool peak_bytes_reserved_is_set;
  int64_t bytes_reservable_limit;
  bool bytes_reservable_limit_is_set;
  int64_t largest_free_block_bytes;
  bool largest_free_block_bytes_is_set;
  int64_t pool_bytes;
  bool pool_bytes_is_set;
  int64_t peak_pool_bytes;
  bool peak_pool_bytes_is_set;
};

struct PJRT_Device_ClearMemoryStats_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
};

struct PJRT_Device_PoisonExecution_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  int32_t launch_id;
  PJRT_Error_Code error_code;
  const char *error_message;
  size_t error_message_size;
  bool poisoned;
  const PJRT_NamedValue *payload;
  size_t num_payload;
};

struct PJRT_Device_GetAttributes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  const PJRT_NamedValue *attributes;
  size_t num_attributes;
  PJRT_Device_Attributes *device_attributes;
  void (*attributes_deleter)(PJRT_Device_Attributes *);
};

struct PJRT_Device_CreateAsyncTrackingEvent_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  const char *description;
  size_t description_size;
  PJRT_AsyncTrackingEvent *event;
};

struct PJRT_AsyncTrackingEvent_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_AsyncTrackingEvent *event;
};

struct PJRT_Memory_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  int id;
};

struct PJRT_Memory_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  const char *kind;
  size_t kind_size;
};

struct PJRT_Memory_Kind_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  int kind_id;
};

struct PJRT_Memory_DebugString_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  const char *debug_string;
  size_t debug_string_size;
};

struct PJRT_Memory_ToString_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  const char *to_string;
  size_t to_string_size;
};

struct PJRT_Memory_AddressableByDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  PJRT_Device *const *devices;
  size_t num_devices;
};

struct PJRT_ExecuteContext_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_ExecuteContext *context;
};

struct PJRT_ExecuteContext_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_ExecuteContext *context;
};

struct PJRT_Executable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
};

struct PJRT_LoadedExecutable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
};

struct PJRT_LoadedExecutable_GetExecutable_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *loaded_executable;
  PJRT_Executable *executable;
};

struct PJRT_LoadedExecutable_GetDeviceAssignment_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  const char *serialized_bytes;
  size_t serialized_bytes_size;
  PJRT_DeviceAssignmentSerialized *serialized_device_assignment;
  void (*serialized_device_assignment_deleter)(PJRT_DeviceAssignmentSerialized *);
};

struct PJRT_Executable_Name_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  const char *executable_name;
  size_t executable_name_size;
};

struct PJRT_Executable_NumReplicas_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_replicas;
};

struct PJRT_Executable_NumPartitions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_partitions;
};

struct PJRT_LoadedExecutable_AddressableDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  PJRT_Device *const *addressable_devices;
  size_t num_addressable_devices;
};

struct PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  PJRT_LogicalDeviceIds *addressable_device_logical_ids;
  size_t num_addressable_device_logical_ids;
};

struct PJRT_Executable_OptimizedProgram_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  PJRT_Program *program;
};

struct PJRT_LoadedExecutable_Delete_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
};

struct PJRT_LoadedExecutable_IsDeleted_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  bool is_deleted;
};

struct PJRT_SendCallbackInfo {
  int64_t channel_id;
  void *user_arg;
  PJRT_SendCallback send_callback;
};

struct PJRT_RecvCallbackInfo {
  int64_t channel_id;
  void *user_arg;
  PJRT_RecvCallback recv_callback;
};

struct PJRT_HloOutputCallbackInfo {
  void *user_arg;
  PJRT_HloOutputCallback callback;
  int64_t callback_id;
  size_t num_operands;
};

struct PJRT_ExecuteOptions {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_SendCallbackInfo **send_callbacks;
  PJRT_RecvCallbackInfo **recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t *non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  PJRT_ExecuteContext *context;
  const char *call_location;
  size_t num_tasks;
  int *task_ids;
  int64_t *incarnation_ids;
  PJRT_MultiSlice_Config *multi_slice_config;
  bool use_major_to_minor_data_layout_for_callbacks;
  PJRT_HloOutputCallbackInfo *hlo_output_callbacks;
  size_t num_hlo_output_callbacks;
};

struct PJRT_LoadedExecutable_Execute_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  PJRT_ExecuteOptions *options;
  PJRT_Buffer *const *const *argument_lists;
  size_t num_devices;
  size_t num_args;
  PJRT_Buffer **const *output_lists;
  PJRT_Event **device_complete_events;
  PJRT_Device *execute_device;
};

struct PJRT_Executable_NumOutputs_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;
};

struct PJRT_Executable_SizeOfGeneratedCodeInBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  int64_t size_in_bytes;
};

struct PJRT_Executable_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  const char *executable_fingerprint;
  size_t executable_fingerprint_size;
};

struct PJRT_Executable_GetCostAnalysis_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_properties;
  const PJRT_NamedValue *properties;
};

struct PJRT_Executable_GetCompiledMemoryStats_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  int64_t generated_code_size_in_bytes;
  int64_t argument_size_in_bytes;
  int64_t output_size_in_bytes;
  int64_t alias_size_in_bytes;
  int64_t temp_size_in_bytes;
  int64_t host_generated_code_size_in_bytes;
  int64_t host_argument_size_in_bytes;
  int64_t host_output_size_in_bytes;
  int64_t host_alias_size_in_bytes;
  int64_t host_temp_size_in_bytes;
  int64_t peak_memory_in_bytes;
  int64_t total_size_in_bytes;
  int64_t total_allocation_bytes;
  int64_t indefinite_allocations;
  int64_t peak_unpadded_heap_bytes;
};

struct PJRT_Executable_OutputElementTypes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  PJRT_Buffer_Type *output_types;
  size_t num_output_types;
};

struct PJRT_Executable_OutputDimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;
  const int64_t *dims;
  const size_t *dim_sizes;
};

struct PJRT_Executable_ParameterMemoryKinds_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_parameters;
  const char *const *memory_kinds;
  const size_t *memory_kind_sizes;
};

struct PJRT_Executable_OutputMemoryKinds_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;
  const char *const *memory_kinds;
  const size_t *memory_kind_sizes;
};

struct PJRT_Executable_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Executable *executable;
  const char *serialized_bytes;
  size_t serialized_bytes_size;
  PJRT_SerializedExecutable *serialized_executable;
  void (*serialized_executable_deleter)(PJRT_SerializedExecutable *);
};

struct PJRT_Executable_GetCompileOptions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  const char *serialized_bytes;
  size_t serialized_bytes_size;
  PJRT_SerializedCompileOptions *serialized_compile_options;
  void (*serialized_compile_options_deleter)(PJRT_SerializedCompileOptions *);
};

struct PJRT_LoadOptions {
  size_t struct_size;
  const int32_t *computation_origin;
  size_t computation_origin_size;
  PJRT_MultiSlice_Config *multi_slice_config;
};

struct PJRT_Executable_DeserializeAndLoad_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const char *serialized_executable;
  size_t serialized_executable_size;
  PJRT_LoadedExecutable *loaded_executable;
  const char *overridden_serialized_compile_options;
  size_t overridden_serialized_compile_options_size;
  PJRT_LoadOptions *load_options;
};

struct PJRT_LoadedExecutable_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  const char *executable_fingerprint;
  size_t executable_fingerprint_size;
};

struct PJRT_Buffer_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

struct PJRT_Buffer_ElementType_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Buffer_Type type;
};

struct PJRT_Buffer_Dimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  const int64_t *dims;
  size_t num_dims;
};

struct PJRT_Buffer_UnpaddedDimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  const int64_t *unpadded_dims;
  size_t num_dims;
};

struct PJRT_Buffer_DynamicDimensionIndices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  const size_t *dynamic_dim_indices;
  size_t num_dynamic_dims;
};

struct PJRT_Buffer_GetMemoryLayout_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  struct PJRT_Buffer_MemoryLayout layout;
};

struct PJRT_Buffer_ToHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *src;
  PJRT_Buffer_MemoryLayout *host_layout;
  void *dst;
  size_t dst_size;
  PJRT_Event *event;
};

struct PJRT_Buffer_OnDeviceSizeInBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  size_t on_device_size_in_bytes;
};

struct PJRT_Buffer_Delete_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

struct PJRT_Buffer_IsDeleted_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  bool is_deleted;
};

struct PJRT_Buffer_CopyRawToHost_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  void *dst;
  int64_t offset;
  int64_t transfer_size;
  PJRT_Event *event;
};

struct PJRT_Buffer_CopyRawToHostFuture_Callback_Args {
  size_t struct_size;
  void *callback_data;
  PJRT_Error_Code error_code;
  const char *error_message;
  size_t error_message_size;
  void *dst;
};

struct PJRT_Buffer_CopyRawToHostFuture_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  int64_t offset;
  int64_t transfer_size;
  PJRT_Event *event;
  void *callback_data;
  void (*future_ready_callback)(PJRT_Buffer_CopyRawToHostFuture_Callback_Args *);
};

struct PJRT_Buffer_CopyToDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Device *dst_device;
  PJRT_Buffer *dst_buffer;
};

struct PJRT_Buffer_CopyToMemory_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Memory *dst_memory;
  PJRT_Buffer *dst_buffer;
};

struct PJRT_Buffer_Bitcast_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Buffer_Type element_type;
  const int64_t *dims;
  size_t num_dims;
  PJRT_Buffer_MemoryLayout *device_layout;
  PJRT_Buffer *out_buffer;
};

struct PJRT_Buffer_IsOnCpu_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  bool is_on_cpu;
};

struct PJRT_Buffer_Device_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Device *device;
};

struct PJRT_Buffer_Memory_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Memory *memory;
};

struct PJRT_Buffer_ReadyEvent_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Event *event;
};

struct PJRT_Buffer_UnsafePointer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  uintptr_t buffer_pointer;
};

struct PJRT_Buffer_IncreaseExternalReferenceCount_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

struct PJRT_Buffer_DecreaseExternalReferenceCount_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

struct PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  void *device_memory_ptr;
};

struct PJRT_Buffer_DonateWithControlDependency_Callback_Args {
  size_t struct_size;
  void *callback_data;
  PJRT_Error_Code error_code;
  const char *error_message;
  size_t error_message_size;
};

struct PJRT_Buffer_DonateWithControlDependency_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  void *callback_data;
  void (*dependency_ready_callback)(PJRT_Buffer_DonateWithControlDependency_Callback_Args *);
  PJRT_Buffer *out_buffer;
};

struct PJRT_CopyToDeviceStream_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_CopyToDeviceStream *stream;
};

struct PJRT_CopyToDeviceStream_AddChunk_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_CopyToDeviceStream *stream;
  PJRT_Chunk *chunk;
  PJRT_Event *transfer_complete;
};

struct PJRT_CopyToDeviceStream_TotalBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_CopyToDeviceStream *stream;
  int64_t total_bytes;
};

struct PJRT_CopyToDeviceStream_GranuleSize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_CopyToDeviceStream *stream;
  int64_t granule_size_in_bytes;
};

struct PJRT_CopyToDeviceStream_CurrentBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_CopyToDeviceStream *stream;
  int64_t current_bytes;
};

struct PJRT_TopologyDescription_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const char *topology_name;
  size_t topology_name_size;
  const PJRT_NamedValue *create_options;
  size_t num_options;
  PJRT_TopologyDescription *topology;
};

struct PJRT_TopologyDescription_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_TopologyDescription *topology;
};

struct PJRT_TopologyDescription_PlatformVersion_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_TopologyDescription *topology;
  const char *platform_version;
  size_t platform_version_size;
};

struct PJRT_TopologyDescription_PlatformName_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_TopologyDescription *topology;
  const char *platform_name;
  size_t platform_name_size;
};

struct PJRT_TopologyDescription_GetDeviceDescriptions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_TopologyDescription *topology;
  PJRT_DeviceDescription *const *descriptions;
  size_t num_descriptions;
};

struct PJRT_TopologyDescription_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_TopologyDescription *topology;
  const char *serialized_bytes;
  size_t serialized_bytes_size;
  PJRT_SerializedTopology *serialized_topology;
  void (*serialized_topology_deleter)(PJRT_SerializedTopology *);
};

struct PJRT_TopologyDescription_Deserialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const char *serialized_topology;
  size_t serialized_topology_size;
  PJRT_TopologyDescription *topology;
};

struct PJRT_TopologyDescription_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_TopologyDescription *topology;
  const PJRT_NamedValue *attributes;
  size_t num_attributes;
};

struct PJRT_TopologyDescription_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_TopologyDescription *topology;
  uint64_t fingerprint;
};

struct PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_TopologyDescription *topology;
  int memory_space_kind_id;
  const int64_t *dims;
  size_t num_dims;
  PJRT_Buffer_Type element_type;
  const PJRT_Buffer_MemoryLayout *layout;
  const char *serialized_shape;
  size_t serialized_shape_size;
  void (*serialized_shape_deleter)(const char *);
};

struct PJRT_TopologyDescription_GetMemorySpaceKindIds_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_TopologyDescription *topology;
  const int *memory_space_kind_ids;
  size_t num_memory_space_kind_ids;
};

struct PJRT_Compile_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_TopologyDescription *topology;
  const PJRT_Program *program;
  const char *compile_options;
  size_t compile_options_size;
  PJRT_Client *client;
  PJRT_Executable *executable;
};

struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  struct PJRT_Api_Version pjrt_api_version;
  _PJRT_API_STRUCT_FIELD(PJRT_Error_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_Error_Message);
  _PJRT_API_STRUCT_FIELD(PJRT_Error_GetCode);
  _PJRT_API_STRUCT_FIELD(PJRT_Plugin_Initialize);
  _PJRT_API_STRUCT_FIELD(PJRT_Plugin_Attributes);
  _PJRT_API_STRUCT_FIELD(PJRT_Event_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_Event_IsReady);
  _PJRT_API_STRUCT_FIELD(PJRT_Event_Error);
  _PJRT_API_STRUCT_FIELD(PJRT_Event_Await);
  _PJRT_API_STRUCT_FIELD(PJRT_Event_OnReady);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_Create);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_PlatformName);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_ProcessIndex);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_PlatformVersion);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_Devices);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_AddressableDevices);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_LookupDevice);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_LookupAddressableDevice);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_AddressableMemories);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_Compile);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_DefaultDeviceAssignment);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_BufferFromHostBuffer);
  _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_Id);
  _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_ProcessIndex);
  _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_Attributes);
  _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_Kind);
  _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_DebugString);
  _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_ToString);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_GetDescription);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_IsAddressable);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_LocalHardwareId);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_AddressableMemories);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_DefaultMemory);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_MemoryStats);
  _PJRT_API_STRUCT_FIELD(PJRT_Memory_Id);
  _PJRT_API_STRUCT_FIELD(PJRT_Memory_Kind);
  _PJRT_API_STRUCT_FIELD(PJRT_Memory_DebugString);
  _PJRT_API_STRUCT_FIELD(PJRT_Memory_ToString);
  _PJRT_API_STRUCT_FIELD(PJRT_Memory_AddressableByDevices);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_Name);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_NumReplicas);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_NumPartitions);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_NumOutputs);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_SizeOfGeneratedCodeInBytes);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_GetCostAnalysis);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_OutputMemoryKinds);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_OptimizedProgram);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_Serialize);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_GetExecutable);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_AddressableDevices);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_Delete);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_IsDeleted);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_Execute);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_DeserializeAndLoad);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_Fingerprint);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_ElementType);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Dimensions);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_UnpaddedDimensions);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_DynamicDimensionIndices);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_GetMemoryLayout);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_OnDeviceSizeInBytes);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Device);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Memory);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Delete);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_IsDeleted);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_CopyToDevice);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_ToHostBuffer);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_IsOnCpu);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_ReadyEvent);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_UnsafePointer);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_IncreaseExternalReferenceCount);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_DecreaseExternalReferenceCount);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_OpaqueDeviceMemoryDataPointer);
  _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_AddChunk);
  _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_TotalBytes);
  _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_GranuleSize);
  _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_CurrentBytes);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Create);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_PlatformName);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_PlatformVersion);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_GetDeviceDescriptions);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Serialize);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Attributes);
  _PJRT_API_STRUCT_FIELD(PJRT_Compile);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_OutputElementTypes);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_OutputDimensions);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_CopyToMemory);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateViewOfDeviceBuffer);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_Fingerprint);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_TopologyDescription);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_GetCompiledMemoryStats);
  _PJRT_API_STRUCT_FIELD(PJRT_Memory_Kind_Id);
  _PJRT_API_STRUCT_FIELD(PJRT_ExecuteContext_Create);
  _PJRT_API_STRUCT_FIELD(PJRT_ExecuteContext_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_CopyRawToHost);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_TransferData);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateBuffersForAsyncHostToDevice);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_Device);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_BufferCount);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_BufferSize);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_SetBufferError);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_AddMetadata);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_DmaMap);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_DmaUnmap);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateUninitializedBuffer);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_UpdateGlobalProcessInfo);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Deserialize);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateAliasBuffer);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_FulfillAliasBuffer);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_GetDeviceAssignment);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateErrorBuffer);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_CopyRawToHostFuture);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_PoisonExecution);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_CreateAsyncTrackingEvent);
  _PJRT_API_STRUCT_FIELD(PJRT_AsyncTrackingEvent_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_GetCompileOptions);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_DonateWithControlDependency);
  _PJRT_API_STRUCT_FIELD(PJRT_Event_Create);
  _PJRT_API_STRUCT_FIELD(PJRT_Event_Set);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_GetAttributes);
  _PJRT_API_STRUCT_FIELD(PJRT_Client_Load);
  _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_AddressableDeviceLogicalIds);
  _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Bitcast);
  _PJRT_API_STRUCT_FIELD(PJRT_Error_ForEachPayload);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Fingerprint);
  _PJRT_API_STRUCT_FIELD(PJRT_Executable_ParameterMemoryKinds);
  _PJRT_API_STRUCT_FIELD(PJRT_Device_ClearMemoryStats);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace);
  _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_GetMemorySpaceKindIds);
};

struct PJRT_Chunk {
  void *data;
  size_t size;
  void (*deleter)(void *, void *);
  void *deleter_arg;
};

struct PJRT_LogicalDeviceIds {
  int replica;
  int partition;
};

PJRT_DEFINE_STRUCT_TRAITS(PJRT_Extension_Base, next);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Api_Version, minor_version);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_Destroy_Args, error);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_Message_Args, message_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_FunctionTable, for_each_payload);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error, vtable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_GetCode_Args, code);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_ForEachPayload_Args, user_arg);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_NamedValue, value_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Plugin_Initialize_Args, extension_start);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Plugin_Attributes_Args, num_attributes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Destroy_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_IsReady_Args, is_ready);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Error_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Await_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_OnReady_Args, user_arg);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Create_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Set_Args, error_message_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_FunctionTable, set_user_data);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory, vtable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_KeyValueGetCallback_Args, value_deleter_callback);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_KeyValueTryGetCallback_Args, value_deleter_callback);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_KeyValuePutCallback_Args, user_arg);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Create_Args, kv_try_get_user_arg);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Destroy_Args, client);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_PlatformName_Args, platform_name_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_ProcessIndex_Args, process_index);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_PlatformVersion_Args, platform_version_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_TopologyDescription_Args, topology);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Devices_Args, num_devices);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_AddressableDevices_Args, num_addressable_devices);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_LookupDevice_Args, device);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_LookupAddressableDevice_Args, addressable_device);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ProcessInfo, error_message_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_UpdateGlobalProcessInfo_Args, num_process_infos);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_AddressableMemories_Args, num_addressable_memories);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Program, format_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Compile_Args, executable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Load_Args, loaded_executable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_DefaultDeviceAssignment_Args, default_assignment);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_DmaMap_Args, size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_DmaUnmap_Args, data);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args, transfer_manager);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_TransferData_Args, done_with_h2d_transfer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args, buffer_out);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_Device_Args, device_out);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args, buffer_count);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args, buffer_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args, error_message_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args, num_metadata);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_MemoryLayout_Tiled, num_tiles);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_MemoryLayout_Strides, num_byte_strides);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_MemoryLayout, type);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args, done_with_h2d_transfer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateUninitializedBuffer_Args, buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateErrorBuffer_Args, num_payload);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateAliasBuffer_Args, fulfill_alias_buffer_cb);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_FulfillAliasBuffer_Args, fulfill_alias_buffer_cb);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_BufferFromHostBuffer_Args, buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateViewOfDeviceBuffer_Args, memory);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ShapeSpec, element_type);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args, transfer_manager);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_Id_Args, id);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_ProcessIndex_Args, process_index);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_Attributes_Args, attributes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_Kind_Args, device_kind_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_DebugString_Args, debug_string_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_ToString_Args, to_string_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_GetDescription_Args, device_description);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_IsAddressable_Args, is_addressable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_LocalHardwareId_Args, local_hardware_id);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_AddressableMemories_Args, num_memories);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_DefaultMemory_Args, memory);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_MemoryStats_Args, peak_pool_bytes_is_set);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_ClearMemoryStats_Args, device);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_PoisonExecution_Args, num_payload);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_GetAttributes_Args, attributes_deleter);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_CreateAsyncTrackingEvent_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncTrackingEvent_Destroy_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_Id_Args, id);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_Kind_Args, kind_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_Kind_Id_Args, kind_id);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_DebugString_Args, debug_string_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_ToString_Args, to_string_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_AddressableByDevices_Args, num_devices);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ExecuteContext_Create_Args, context);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ExecuteContext_Destroy_Args, context);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_Destroy_Args, executable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_Destroy_Args, executable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_GetExecutable_Args, executable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_GetDeviceAssignment_Args, serialized_device_assignment_deleter);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_Name_Args, executable_name_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_NumReplicas_Args, num_replicas);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_NumPartitions_Args, num_partitions);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_AddressableDevices_Args, num_addressable_devices);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args, num_addressable_device_logical_ids);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_OptimizedProgram_Args, program);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_Delete_Args, executable);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_IsDeleted_Args, is_deleted);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_SendCallbackInfo, send_callback);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_RecvCallbackInfo, recv_callback);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_HloOutputCallbackInfo, num_operands);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ExecuteOptions, num_hlo_output_callbacks);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_Execute_Args, execute_device);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_NumOutputs_Args, num_outputs);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, size_in_bytes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_Fingerprint_Args, executable_fingerprint_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_GetCostAnalysis_Args, properties);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_GetCompiledMemoryStats_Args, peak_unpadded_heap_bytes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_OutputElementTypes_Args, num_output_types);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_OutputDimensions_Args, dim_sizes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_ParameterMemoryKinds_Args, memory_kind_sizes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_OutputMemoryKinds_Args, memory_kind_sizes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_Serialize_Args, serialized_executable_deleter);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_GetCompileOptions_Args, serialized_compile_options_deleter);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadOptions, multi_slice_config);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_DeserializeAndLoad_Args, load_options);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_Fingerprint_Args, executable_fingerprint_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Destroy_Args, buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_ElementType_Args, type);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Dimensions_Args, num_dims);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_UnpaddedDimensions_Args, num_dims);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_DynamicDimensionIndices_Args, num_dynamic_dims);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_GetMemoryLayout_Args, layout);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_ToHostBuffer_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Delete_Args, buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_IsDeleted_Args, is_deleted);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyRawToHost_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyRawToHostFuture_Callback_Args, dst);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyRawToHostFuture_Args, future_ready_callback);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyToDevice_Args, dst_buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyToMemory_Args, dst_buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Bitcast_Args, out_buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_IsOnCpu_Args, is_on_cpu);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Device_Args, device);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Memory_Args, memory);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_ReadyEvent_Args, event);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_UnsafePointer_Args, buffer_pointer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_IncreaseExternalReferenceCount_Args, buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_DecreaseExternalReferenceCount_Args, buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, device_memory_ptr);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_DonateWithControlDependency_Callback_Args, error_message_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_DonateWithControlDependency_Args, out_buffer);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_Destroy_Args, stream);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_AddChunk_Args, transfer_complete);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_TotalBytes_Args, total_bytes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_GranuleSize_Args, granule_size_in_bytes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_CurrentBytes_Args, current_bytes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Create_Args, topology);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Destroy_Args, topology);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_PlatformVersion_Args, platform_version_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_PlatformName_Args, platform_name_size);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_GetDeviceDescriptions_Args, num_descriptions);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Serialize_Args, serialized_topology_deleter);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Deserialize_Args, topology);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Attributes_Args, num_attributes);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Fingerprint_Args, fingerprint);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args, serialized_shape_deleter);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args, num_memory_space_kind_ids);
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Compile_Args, executable);

/* The plugin's single exported entry point. */
const PJRT_Api* GetPjrtApi(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_PJRT_C_API_H_ */
