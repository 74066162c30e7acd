-- nsys
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Kernel function name w/ templates
    shortName                   INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Base kernel function name
    mangledName                 INTEGER,                               -- REFERENCES StringIds(id) -- Raw C++ mangled kernel function name
    launchType                  INTEGER,                               -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)
    cacheConfig                 INTEGER,                               -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread executing the kernel.
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ                      INTEGER   NOT NULL,                    -- Z-dimension block size.
    staticSharedMemory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                    -- Total amount of local memory reserved for the kernel (B).
    gridId                      INTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                               -- Shared memory size set by the driver.
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    sharedMemoryLimitConfig     INTEGER                                -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)
);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(770742793,770783434,0,1,0,7,158,281980910436352,63,64,56,1,1,40,1056,1,1,256,1,1,0,0,0,155713536,1,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(770890794,770931242,0,1,0,7,186,281980910436352,63,64,56,1,1,40,1056,1,1,256,1,1,0,0,0,155713536,2,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1167747157,1167751381,0,1,0,7,240,281980910436352,67,68,57,1,1,16,4096,1,1,128,1,1,0,0,0,250871808,3,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1167865045,1168000182,0,1,0,7,247,281980910436352,70,71,58,1,4,156,8,16,1,128,3,1,0,114816,0,250871808,4,135168,NULL,1);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1234219778,1234307299,0,1,0,7,1510,281980910436352,76,76,76,1,2,168,2,64,1,384,1,1,0,213180,0,250871808,5,233472,NULL,1);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1243570491,1243577243,0,1,0,7,1519,281980910436352,97,68,77,1,1,25,8192,1,1,128,1,1,0,0,0,250871808,6,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1248481096,1248487592,0,1,0,7,1533,281980910436352,98,68,78,1,1,22,8192,1,1,128,1,1,0,0,0,250871808,7,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1250330764,1250337260,0,1,0,7,1550,281980910436352,99,68,79,1,1,22,8192,1,1,128,1,1,0,0,0,250871808,8,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1257237118,1257243838,0,1,0,7,1564,281980910436352,100,68,80,1,1,20,8192,1,1,128,1,1,0,0,0,250871808,9,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1257306495,1257314239,0,1,0,7,1574,281980910436352,101,68,81,1,1,24,8192,1,1,128,1,1,0,0,0,250871808,10,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1257332447,1257338975,0,1,0,7,1591,281980910436352,99,68,79,1,1,22,8192,1,1,128,1,1,0,0,0,250871808,11,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1257352383,1257358783,0,1,0,7,1608,281980910436352,99,68,79,1,1,22,8192,1,1,128,1,1,0,0,0,250871808,12,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1257410239,1257414335,0,1,0,7,1618,281980910436352,102,68,82,1,1,33,4096,1,1,128,1,1,0,0,0,250871808,13,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1257427711,1257434143,0,1,0,7,1628,281980910436352,97,68,77,1,1,25,8192,1,1,128,1,1,0,0,0,250871808,14,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1257454015,1257458143,0,1,0,7,1638,281980910436352,103,68,83,1,1,30,4096,1,1,128,1,1,0,0,0,250871808,15,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1261650186,1261657066,0,1,0,7,1648,281980910436352,104,68,84,1,1,25,8192,1,1,128,1,1,0,0,0,250871808,16,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1268117403,1268121499,0,1,0,7,1654,281980910436352,105,68,85,1,1,30,4096,1,1,128,1,1,0,0,0,250871808,17,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1268166779,1268171291,0,1,0,7,1660,281980910436352,106,68,86,1,1,32,4096,1,1,128,1,1,0,0,0,250871808,18,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1278397686,1278405974,0,1,0,7,1681,281980910436352,108,109,87,1,1,32,1,512,1,512,1,1,16,512,0,250871808,19,16384,NULL,0);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- ID used to identify events that this function call has triggered.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    callchainId                 INTEGER                                -- REFERENCES CUDA_CALLCHAINS(id)
);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(630846976,630848245,1,281980910466508,1,29,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(633167358,635304142,0,281980910466508,121,31,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(769344951,769352020,0,281980910466508,139,59,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(769361571,769477780,0,281980910466508,140,60,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(769638580,769639870,0,281980910466508,152,59,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(769641060,769641360,0,281980910466508,156,59,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(769653360,770755836,0,281980910466508,158,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(770780636,770781856,0,281980910466508,167,59,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(770782126,770862016,0,281980910466508,168,60,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(770876676,770877616,0,281980910466508,180,59,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(770878576,770878826,0,281980910466508,184,59,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(770880226,770890886,0,281980910466508,186,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1163636131,1163775430,1,281980910466508,209,66,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1164072940,1164077829,0,281980910466508,234,59,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1164078349,1164266099,0,281980910466508,235,60,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1164360919,1167749128,0,281980910466508,240,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1167807008,1167808338,1,281980910466508,244,69,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1167824568,1167824728,1,281980910466508,245,69,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1167846478,1167846628,1,281980910466508,246,69,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1167856798,1167865448,1,281980910466508,247,72,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168211397,1168211957,1,281980910466508,257,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168212227,1168212887,1,281980910466508,258,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168213177,1168213697,1,281980910466508,259,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168213877,1168213967,1,281980910466508,260,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168214257,1168214737,1,281980910466508,261,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168214907,1168215397,1,281980910466508,262,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168215587,1168215937,1,281980910466508,263,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168216107,1168216747,1,281980910466508,264,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168216897,1168217427,1,281980910466508,265,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1168217627,1168217957,1,281980910466508,266,73,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1234107345,1234221694,1,281980910466508,1510,96,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1234388934,1243574636,0,281980910466508,1519,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1243912755,1248483430,0,281980910466508,1533,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1248567740,1250331895,0,281980910466508,1550,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1250512394,1257238934,0,281980910466508,1564,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1257285154,1257306694,0,281980910466508,1574,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1257326143,1257331393,0,281980910466508,1591,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1257346643,1257351123,0,281980910466508,1608,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1257388303,1257411393,0,281980910466508,1618,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1257421503,1257427103,0,281980910466508,1628,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1257436893,1257454533,0,281980910466508,1638,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1257477543,1261651440,0,281980910466508,1648,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1261689160,1268118740,0,281980910466508,1654,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1268148280,1268167630,0,281980910466508,1660,65,0,NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(1268433379,1278400989,0,281980910466508,1681,65,0,NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes transferred (B).
    copyKind                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_MEMCPY_OPER(id)
    deprecatedSrcId             INTEGER,                               -- Deprecated, use srcDeviceId instead.
    srcKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    dstKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    srcDeviceId                 INTEGER,                               -- Source device ID.
    srcContextId                INTEGER,                               -- Source context ID.
    dstDeviceId                 INTEGER,                               -- Destination device ID.
    dstContextId                INTEGER,                               -- Destination context ID.
    migrationCause              INTEGER,                               -- REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    virtualAddress              INTEGER                                -- Virtual base address of the page/s being transferred.
);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(1279018551,1279020183,0,1,0,7,1693,281980910436352,1,2,NULL,2,1,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    value                       INTEGER   NOT NULL,                    -- Value assigned to memory.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes set (B).
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    memKind                     INTEGER                                -- REFERENCES ENUM_CUDA_MEM_KIND(id)
);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(1268430236,1268431324,0,1,0,7,1679,281980910436352,0,4,NULL,2);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- Correlation ID of the synchronization API to which this result is associated.
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    syncType                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUPTI_SYNC_TYPE(id)
    eventId                     INTEGER   NOT NULL                     -- Event ID for which the synchronization API is called.
);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(1279018797,1279024627,0,1,NULL,7,1694,281980910436352,2,4294967295);
CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER,                               -- Event end timestamp (ns).
    eventType                   INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_TYPE(id)
    rangeId                     INTEGER,                               -- Correlation ID returned from a nvtxRangeStart call.
    category                    INTEGER,                               -- User-controlled ID that can be used to group events.
    color                       INTEGER,                               -- Encoded ARGB color value.
    text                        TEXT,                                  -- Explicit name/text (non-registered string)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    endGlobalTid                INTEGER,                               -- Serialized GlobalId.
    textId                      INTEGER,                               -- REFERENCES StringIds(id) -- Registered NVTX domain/string
    domainId                    INTEGER,                               -- User-controlled ID that can be used to group events.
    uint64Value                 INTEGER,                               -- One of possible payload value union members.
    int64Value                  INTEGER,                               -- One of possible payload value union members.
    doubleValue                 REAL,                                  -- One of possible payload value union members.
    uint32Value                 INTEGER,                               -- One of possible payload value union members.
    int32Value                  INTEGER,                               -- One of possible payload value union members.
    floatValue                  REAL,                                  -- One of possible payload value union members.
    jsonTextId                  INTEGER,                               -- One of possible payload value union members.
    jsonText                    TEXT,                                  -- One of possible payload value union members.
    binaryData                  TEXT                                   -- Binary payload. See docs for format.
);
INSERT INTO NVTX_EVENTS VALUES(635655591,635659721,59,NULL,NULL,NULL,'Fusion::resetTvUses',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635656301,635657051,59,NULL,NULL,NULL,'getTerminatingOutputs',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635696711,635709710,59,NULL,NULL,NULL,'getTerminatingOutputs',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635697321,635709490,59,NULL,NULL,NULL,'Fusion::resetTvUses',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635697741,635701691,59,NULL,NULL,NULL,'getTerminatingOutputs',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635735601,635780360,59,NULL,NULL,NULL,'TransformReplay::replayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635780980,635786290,59,NULL,NULL,NULL,'Fusion::resetTvUses',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635781510,635781850,59,NULL,NULL,NULL,'getTerminatingOutputs',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635792030,635804750,59,NULL,NULL,NULL,'TransformReplay::replayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635819040,635830270,59,NULL,NULL,NULL,'TransformReplay::replayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635837240,635846020,59,NULL,NULL,NULL,'TransformReplay::replayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635878510,635887570,59,NULL,NULL,NULL,'Fusion::resetTvUses',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635878930,635879390,59,NULL,NULL,NULL,'getTerminatingOutputs',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635913730,635936050,59,NULL,NULL,NULL,'transform_replay.cpp::getMatchedLeafPosWithoutReplayPasC',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635937100,635987280,59,NULL,NULL,NULL,'TransformReplay::replayPasC',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(635994610,636010340,59,NULL,NULL,NULL,'transform_replay.cpp::getMatchedLeafPosWithoutReplayPasC',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636010800,636056260,59,NULL,NULL,NULL,'TransformReplay::replayPasC',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636062069,636076589,59,NULL,NULL,NULL,'transform_replay.cpp::getMatchedLeafPosWithoutReplayPasC',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636077109,636124899,59,NULL,NULL,NULL,'TransformReplay::replayPasC',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636131099,636145849,59,NULL,NULL,NULL,'transform_replay.cpp::getMatchedLeafPosWithoutReplayPasC',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636146309,636185399,59,NULL,NULL,NULL,'TransformReplay::replayPasC',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636191409,636201599,59,NULL,NULL,NULL,'transform_replay.cpp::getMatchedLeafPosWithoutReplayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636202369,636235589,59,NULL,NULL,NULL,'TransformReplay::replayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636244479,636252119,59,NULL,NULL,NULL,'transform_replay.cpp::getMatchedLeafPosWithoutReplayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636252579,636279369,59,NULL,NULL,NULL,'TransformReplay::replayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636283469,636290879,59,NULL,NULL,NULL,'transform_replay.cpp::getMatchedLeafPosWithoutReplayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636291359,636321509,59,NULL,NULL,NULL,'TransformReplay::replayCasP',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(636508998,636509788,59,NULL,NULL,NULL,'getTerminatingOutputs',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(637004767,637005477,59,NULL,NULL,NULL,'getTerminatingOutputs',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO NVTX_EVENTS VALUES(637011017,637011397,59,NULL,NULL,NULL,'getTerminatingOutputs',281980910466508,NULL,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE PROCESSES (
    -- Names and identifiers of processes captured in the report.

    globalPid                   INTEGER,                               -- Serialized GlobalId.
    pid                         INTEGER,                               -- The process ID.
    name                        TEXT                                   -- The process name.
);
INSERT INTO PROCESSES VALUES(281980910436352,30156,'./bin/test_matmul');
INSERT INTO PROCESSES VALUES(281474993487872,1,'dash');
INSERT INTO PROCESSES VALUES(281478734807040,224,'xonsh');
INSERT INTO PROCESSES VALUES(281513883074560,2319,'sccache');
INSERT INTO PROCESSES VALUES(281980541337600,30134,'nsys');
INSERT INTO PROCESSES VALUES(281980709109760,30144,'nsys');
INSERT INTO PROCESSES VALUES(281980893659136,30155,'nsys-launcher');
INSERT INTO PROCESSES VALUES(281980927213568,30157,'nsys-tee');
CREATE TABLE TARGET_INFO_GPU (
    vmId                        INTEGER   NOT NULL,                    -- Serialized GlobalId.
    id                          INTEGER   NOT NULL,                    -- Device ID.
    name                        TEXT,                                  -- Device name.
    busLocation                 TEXT,                                  -- PCI bus location.
    isDiscrete                  INTEGER,                               -- True if discrete, false if integrated.
    l2CacheSize                 INTEGER,                               -- Size of L2 cache (B).
    totalMemory                 INTEGER,                               -- Total amount of memory on the device (B).
    memoryBandwidth             INTEGER,                               -- Amount of memory transferred (B).
    clockRate                   INTEGER,                               -- Clock frequency (Hz).
    smCount                     INTEGER,                               -- Number of multiprocessors on the device.
    pwGpuId                     INTEGER,                               -- PerfWorks GPU ID.
    uuid                        TEXT,                                  -- Device UUID.
    luid                        INTEGER,                               -- Device LUID.
    chipName                    TEXT,                                  -- Chip name.
    cuDevice                    INTEGER,                               -- CUDA device ID.
    ctxswDevPath                TEXT,                                  -- GPU context switch device node path.
    ctrlDevPath                 TEXT,                                  -- GPU control device node path.
    revision                    INTEGER,                               -- Revision number.
    nodeMask                    INTEGER,                               -- Device node mask.
    constantMemory              INTEGER,                               -- Memory available on device for __constant__ variables (B).
    maxIPC                      INTEGER,                               -- Maximum instructions per count.
    maxRegistersPerBlock        INTEGER,                               -- Maximum number of 32-bit registers available per block.
    maxShmemPerBlock            INTEGER,                               -- Maximum optin shared memory per block.
    maxShmemPerBlockOptin       INTEGER,                               -- Maximum optin shared memory per block.
    maxShmemPerSm               INTEGER,                               -- Maximum shared memory available per multiprocessor (B).
    maxRegistersPerSm           INTEGER,                               -- Maximum number of 32-bit registers available per multiprocessor.
    threadsPerWarp              INTEGER,                               -- Warp size in threads.
    asyncEngines                INTEGER,                               -- Number of asynchronous engines.
    maxWarpsPerSm               INTEGER,                               -- Maximum number of warps per multiprocessor.
    maxBlocksPerSm              INTEGER,                               -- Maximum number of blocks per multiprocessor.
    maxThreadsPerBlock          INTEGER,                               -- Maximum number of threads per block.
    maxBlockDimX                INTEGER,                               -- Maximum X-dimension of a block.
    maxBlockDimY                INTEGER,                               -- Maximum Y-dimension of a block.
    maxBlockDimZ                INTEGER,                               -- Maximum Z-dimension of a block.
    maxGridDimX                 INTEGER,                               -- Maximum X-dimension of a grid.
    maxGridDimY                 INTEGER,                               -- Maximum Y-dimension of a grid.
    maxGridDimZ                 INTEGER,                               -- Maximum Z-dimension of a grid.
    computeMajor                INTEGER,                               -- Major compute capability version number.
    computeMinor                INTEGER,                               -- Minor compute capability version number.
    smMajor                     INTEGER,                               -- Major multiprocessor version number.
    smMinor                     INTEGER                                -- Minor multiprocessor version number.
);
INSERT INTO TARGET_INFO_GPU VALUES(281474976710656,0,'NVIDIA H200','0000:45:00.0',1,62914560,150137864192,4916736000000,1980000000,132,0,'9f8075aa-e02a-0953-1955-32f638fb2993',0,'GH100',0,'','',161,0,65536,0,65536,49152,232448,233472,65536,32,3,64,32,1024,1024,1024,64,2147483647,65535,65535,9,0,9,0);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,                               -- UTC Epoch timestamp at start of the capture (ns).
    utcTime                     TEXT,                                  -- Start of the capture in UTC.
    localTime                   TEXT                                   -- Start of the capture in local time of target.
);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES(1733877925987393218,'2024-12-11T00:45:25','2024-12-10T16:45:25');
CREATE TABLE META_DATA_EXPORT (
    -- information about nsys export process

    name                        TEXT      NOT NULL,                    -- Name of meta-data record
    value                       TEXT                                   -- Value of meta-data record
);
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_NAME','NVIDIA Nsight Systems');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','2024.6.2.25');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_DATE','2024.6');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION','3.16.1');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION_MAJOR','3');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION_MINOR','16');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION_MICRO','1');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION_CKSUM','1636331256 167395');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PLATFORM','linux-desktop');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_ARCH','x64');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_TIME_UTC','2024-12-11T00:45:28');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_TIME_LOCAL','2024-12-10T16:45:28 -0800 PST');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_HOST','e9ce1d13d1dc');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_USER','');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_INPUT_FILE','report1.nsys-rep');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_OUTPUT_FILE','report1.sqlite');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_INPUT_PATH','/opt/pytorch/nvfuser/report1.nsys-rep');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_OUTPUT_PATH','/opt/pytorch/nvfuser/report1.sqlite');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_INPUT_PATH_ABS','/opt/pytorch/nvfuser/report1.nsys-rep');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_OUTPUT_PATH_ABS','/opt/pytorch/nvfuser/report1.sqlite');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_OVERWRITE','true');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_APPEND','false');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_LAZY','true');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_TIME_NORMALIZE','false');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_TIME_SHIFT','0');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_TABLES_TO_EXPORT','');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PARAM_TIMES_TO_EXPORT','');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_CONFIG_TIME_SHIFT','0');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_TIME','0.02 sec');
CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
);
INSERT INTO StringIds VALUES(0,'GpuMetrics');
INSERT INTO StringIds VALUES(29,'cuModuleGetLoadingMode');
INSERT INTO StringIds VALUES(31,'cudaGetDeviceProperties_v2_v12000');
INSERT INTO StringIds VALUES(56,'_ZN2at6native54_GLOBAL__N__4b00444d_21_DistributionNormal_cu_0c5b6e8543distribution_elementwise_grid_stride_kernelIfLi4EZNS0_9templates4cuda20normal_and_transformIN3c104HalfEfPNS_17CUDAGeneratorImplEZZZNS4_13normal_kernelIS9_EEvRKNS_10TensorBaseEddT_ENKUlvE_clEvENKUlvE1_clEvEUlfE_EEvRNS_18TensorIteratorBaseET1_T2_EUlP24curandStatePhilox4_32_10E0_ZNS1_27distribution_nullary_kernelIS7_f6float4S9_SO_SH_EEvSJ_SL_RKT3_T4_EUlifE_EEviNS_15PhiloxCudaStateESK_SL_');
INSERT INTO StringIds VALUES(57,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIN3c104HalfEEESt5arrayIPcLm1EEEEviT0_T1_');
INSERT INTO StringIds VALUES(58,'_ZN71_GLOBAL__N__00000000_32___tmp_kernel_none_f0_c0_r0_g0_cu_ab37a358_3015624nvfuser_none_f0_c0_r0_g0ENS_6TensorINS_6__halfELi3ELi3EEES2_NS_9TensorMapES3_S3_NS0_IS1_Li2ELi2EEE');
INSERT INTO StringIds VALUES(59,'cudaStreamIsCapturing_v10000');
INSERT INTO StringIds VALUES(60,'cudaMalloc_v3020');
INSERT INTO StringIds VALUES(63,'void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, void at::native::templates::cuda::normal_and_transform<c10::Half, float, at::CUDAGeneratorImpl *, void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 3)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, T3, T4)::[lambda(curandStatePhilox4_32_10 *) (instance 2)], void at::native::<unnamed>::distribution_nullary_kernel<c10::Half, float, float4, at::CUDAGeneratorImpl *, void at::native::templates::cuda::normal_and_transform<c10::Half, float, at::CUDAGeneratorImpl *, void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 3)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, T3, T4)::[lambda(curandStatePhilox4_32_10 *) (instance 2)], void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 3)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, T4, const T5 &, T6)::[lambda(int, float) (instance 1)]>(int, at::PhiloxCudaState, T3, T4)');
INSERT INTO StringIds VALUES(64,'distribution_elementwise_grid_stride_kernel');
INSERT INTO StringIds VALUES(65,'cudaLaunchKernel_v7000');
INSERT INTO StringIds VALUES(66,'cuModuleLoadDataEx');
INSERT INTO StringIds VALUES(67,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<c10::Half>, std::array<char *, (unsigned long)1>>(int, T2, T3)');
INSERT INTO StringIds VALUES(68,'vectorized_elementwise_kernel');
INSERT INTO StringIds VALUES(69,'cuTensorMapEncodeTiled');
INSERT INTO StringIds VALUES(70,'<unnamed>::nvfuser_none_f0_c0_r0_g0(<unnamed>::Tensor<<unnamed>::__half, (int)3, (int)3>, <unnamed>::Tensor<<unnamed>::__half, (int)3, (int)3>, <unnamed>::TensorMap, <unnamed>::TensorMap, <unnamed>::TensorMap, <unnamed>::Tensor<<unnamed>::__half, (int)2, (int)2>)');
INSERT INTO StringIds VALUES(71,'nvfuser_none_f0_c0_r0_g0');
INSERT INTO StringIds VALUES(72,'cuLaunchKernel');
INSERT INTO StringIds VALUES(73,'cuGetProcAddress_v2');
INSERT INTO StringIds VALUES(76,'nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTT');
INSERT INTO StringIds VALUES(77,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIN3c104HalfES4_bNS0_51_GLOBAL__N__86fa8531_18_CompareEQKernel_cu_d8008c9616CompareEqFunctorIS4_EEEESt5arrayIPcLm3EEEEviT0_T1_');
INSERT INTO StringIds VALUES(78,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIN3c104HalfES4_S4_NS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_');
INSERT INTO StringIds VALUES(79,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIN3c104HalfEEESt5arrayIPcLm2EEEEviT0_T1_');
INSERT INTO StringIds VALUES(80,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_21CUDAFunctorOnSelf_addIN3c104HalfEEESt5arrayIPcLm2EEEEviT0_T1_');
INSERT INTO StringIds VALUES(81,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c104HalfEEESt5arrayIPcLm3EEEEviT0_T1_');
INSERT INTO StringIds VALUES(82,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIN3c104HalfES4_bNS0_51_GLOBAL__N__86fa8531_18_CompareEQKernel_cu_d8008c9616CompareEqFunctorIS4_EEEESt5arrayIPcLm2EEEEviT0_T1_');
INSERT INTO StringIds VALUES(83,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIbbbNS0_15binary_internal10MulFunctorIbEEEESt5arrayIPcLm3EEEEviT0_T1_');
INSERT INTO StringIds VALUES(84,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_50_GLOBAL__N__00d09cf5_17_CompareKernels_cu_8f1b29aa14CompareFunctorIN3c104HalfEEESt5arrayIPcLm3EEEEviT0_T1_');
INSERT INTO StringIds VALUES(85,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIbbbNS0_17BitwiseAndFunctorIbEEEESt5arrayIPcLm3EEEEviT0_T1_');
INSERT INTO StringIds VALUES(86,'_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIbbbNS0_16BitwiseOrFunctorIbEEEESt5arrayIPcLm3EEEEviT0_T1_');
INSERT INTO StringIds VALUES(87,'_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIbNS0_14func_wrapper_tIbZZZNS0_15and_kernel_cudaERNS_14TensorIteratorEENKUlvE_clEvENKUlvE10_clEvEUlbbE_EEjbLi4EEEEEvT1_');
INSERT INTO StringIds VALUES(96,'cuLaunchKernelEx');
INSERT INTO StringIds VALUES(97,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::BinaryFunctor<c10::Half, c10::Half, bool, at::native::<unnamed>::CompareEqFunctor<c10::Half>>, std::array<char *, (unsigned long)3>>(int, T2, T3)');
INSERT INTO StringIds VALUES(98,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::AUnaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)2>>(int, T2, T3)');
INSERT INTO StringIds VALUES(99,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::AbsFunctor<c10::Half>, std::array<char *, (unsigned long)2>>(int, T2, T3)');
INSERT INTO StringIds VALUES(100,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctorOnSelf_add<c10::Half>, std::array<char *, (unsigned long)2>>(int, T2, T3)');
INSERT INTO StringIds VALUES(101,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<c10::Half>, std::array<char *, (unsigned long)3>>(int, T2, T3)');
INSERT INTO StringIds VALUES(102,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::AUnaryFunctor<c10::Half, c10::Half, bool, at::native::<unnamed>::CompareEqFunctor<c10::Half>>, std::array<char *, (unsigned long)2>>(int, T2, T3)');
INSERT INTO StringIds VALUES(103,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::BinaryFunctor<bool, bool, bool, at::native::binary_internal::MulFunctor<bool>>, std::array<char *, (unsigned long)3>>(int, T2, T3)');
INSERT INTO StringIds VALUES(104,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::<unnamed>::CompareFunctor<c10::Half>, std::array<char *, (unsigned long)3>>(int, T2, T3)');
INSERT INTO StringIds VALUES(105,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::BinaryFunctor<bool, bool, bool, at::native::BitwiseAndFunctor<bool>>, std::array<char *, (unsigned long)3>>(int, T2, T3)');
INSERT INTO StringIds VALUES(106,'void at::native::vectorized_elementwise_kernel<(int)4, at::native::BinaryFunctor<bool, bool, bool, at::native::BitwiseOrFunctor<bool>>, std::array<char *, (unsigned long)3>>(int, T2, T3)');
INSERT INTO StringIds VALUES(108,'void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<bool, at::native::func_wrapper_t<bool, at::native::and_kernel_cuda(at::TensorIterator &)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 12)]::operator ()() const::[lambda(bool, bool) (instance 1)]>, unsigned int, bool, (int)4>>(T3)');
INSERT INTO StringIds VALUES(109,'reduce_kernel');
ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN globalPid;
ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY DROP COLUMN globalPid;
ALTER TABLE CUPTI_ACTIVITY_KIND_MEMSET DROP COLUMN globalPid;
ALTER TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION DROP COLUMN globalPid;
ALTER TABLE PROCESSES DROP COLUMN globalPid;
