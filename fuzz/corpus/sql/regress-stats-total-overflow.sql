-- nsys
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                      -- Green context ID.
    streamId                    INTEGER   NOT NULL,                  -- Stream ID.
    correlationId         gpt_scoNTEGER,                               --TIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,              templates
    shortName                   INTEGER   NOT NULL,                    -- REFERE -- Base kernelsqliction name
    mangledName                 INTEGER,                         INTEGER,                               -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)
    cacheConfig                 INTEGER,                         -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread 
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ              NOT NULL,       ory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                   NTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                  -- Shared memory size set by the driver.
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    sharedMemoryLimitConfig     INTEGER                    -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)
);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(770742793,770783434,0,1,0,7,158,281980910436352,63,64,56,1,1,40,1056,1,1,256,1,1,0,0,0,155713536,1,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(770890794,770931242,0,1,0,7,1574,281980910436352,101,68,81,1,1,24,8192,1,1,128,1,1,0,0,0,250871808,10,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(1257332447,1257338975,0,1,0,7,1591,28198091036352,102,68,82,1,1,33,408192,1,1,128,1,1,0,0,0,250871808,14,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(125766666666666666666666666454015,1257458143,0,1,0,7,1638,281980910436352,103,68,83,1,1,30,4096,1,1,128,1,1,0,0,0,250871808,15,32768,NULL,0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(12616StringIds VALUES(103,'void at::native::vectorized_elementwis,domainId,int)4, at::nativaryFunctor<bool, bool, bool, at:tive:nel');
DROP TABLE TARGET_INFO_GPU;
