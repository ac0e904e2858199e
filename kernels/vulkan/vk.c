/* The Vulkan host (kernels/vulkan/vk.h): one device context (instance, device, compute queue, a command buffer for
 * uploads), storage buffers, one compute pipeline per run with specialization constants, the device ops of kernel.h
 * (each run records its samples into its own command buffer between two timestamps; the harness owns every
 * repetition), the checking interface through those same ops, the streaming-read run and a whole-token run. Every
 * Vulkan call is checked; a failure names the call and its VkResult. */
#include "vk.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "host_encode.h"
#include "ptq1_0.h"

/* the SPIR-V of the shaders (generated at build time by glslangValidator --vn, checked by spirv-val) */
#include "direct_spv.h"
#include "dmmv_spv.h"
#include "fma_probe_spv.h"
#include "production_spv.h"
#include "q8_0_dot_spv.h"
#include "mmvq_spv.h"
#include "planar2_fused_spv.h"
#include "planar2_spv.h"
#include "quantize_q8_1_spv.h"
#include "q1516_spv.h"
#include "read_spv.h"
#include "stateset_spv.h"

#define BLOCK_BYTES 28 /* PTQ1_0 bytes per 128 weights */
enum { N_BINDINGS = 7, B_W = 0, B_ACT = 1, B_SCALE = 2, B_Y = 3, B_A = 4, B_QG = 5, B_QR = 6 };
enum { FLAG_A = 1, FLAG_Q = 2 };

/* Every Vulkan call: on failure, "call (file:line): VkResult n" into err and jump to the caller's `fail`. */
#define VK(call)                                                                                                    \
    do {                                                                                                           \
        VkResult r_ = (call);                                                                                      \
        if (r_ != VK_SUCCESS) {                                                                                    \
            snprintf(err, errlen, "%s (%s:%d): VkResult %d", #call, __FILE__, __LINE__, (int)r_);                  \
            goto fail;                                                                                             \
        }                                                                                                          \
    } while (0)

/* ---- host allocations of the objects a run creates ----
 * Every buffer, memory object, shader module, pipeline, descriptor pool and each run's command pool, fence and query
 * pool is created and destroyed with OBJ_ALLOC, which counts the driver's host allocations still live. Vulkan frees
 * every allocation made through an object's allocator when the object is destroyed, so a run that leaves the count
 * above where it started has left an object undestroyed; the checking interface (after its run) and read_create
 * (after building and destroying the read run once) refuse that with an error. (Memcheck and LeakSanitizer cannot
 * tell: such an allocation is made inside the driver, whose own leaks they are told to skip.) A driver may also
 * allocate from its device's allocator instead: lavapipe does for pipelines, so there a forgotten pipeline goes
 * unseen; a forgotten buffer, memory object, shader module, descriptor pool or command pool fails every check. */

typedef struct {
    void *raw;   /* what malloc returned */
    size_t size; /* bytes asked for */
} alloc_head;

static size_t live_allocs; /* under the allocator's lock */
static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static void *VKAPI_PTR obj_alloc(void *user, size_t size, size_t align, VkSystemAllocationScope scope)
{
    (void)user, (void)scope;
    if (align < sizeof(void *))
        align = sizeof(void *);
    /* size 0 is served (a block of its own): lavapipe asks for it while recording a barrier into a command buffer of
     * a pool made with these callbacks */
    if ((align & (align - 1)) || size > SIZE_MAX - align - sizeof(alloc_head))
        return NULL;
    char *raw = malloc(size + align + sizeof(alloc_head));
    if (!raw)
        return NULL;
    char *p = raw + sizeof(alloc_head);
    p += (align - (uintptr_t)p % align) % align;
    const alloc_head h = {raw, size};
    memcpy(p - sizeof h, &h, sizeof h);
    pthread_mutex_lock(&alloc_lock);
    live_allocs++;
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

static void VKAPI_PTR obj_free(void *user, void *p)
{
    (void)user;
    if (!p)
        return;
    alloc_head h;
    memcpy(&h, (char *)p - sizeof h, sizeof h);
    free(h.raw);
    pthread_mutex_lock(&alloc_lock);
    live_allocs--;
    pthread_mutex_unlock(&alloc_lock);
}

static void *VKAPI_PTR obj_realloc(void *user, void *old, size_t size, size_t align, VkSystemAllocationScope scope)
{
    if (!old)
        return obj_alloc(user, size, align, scope);
    if (size == 0) {
        obj_free(user, old);
        return NULL;
    }
    void *p = obj_alloc(user, size, align, scope);
    if (!p)
        return NULL; /* the old allocation stays valid */
    alloc_head h;
    memcpy(&h, (char *)old - sizeof h, sizeof h);
    memcpy(p, old, h.size < size ? h.size : size);
    obj_free(user, old);
    return p;
}

static const VkAllocationCallbacks obj_callbacks = {.pfnAllocation = obj_alloc, .pfnReallocation = obj_realloc,
                                                    .pfnFree = obj_free};
#define OBJ_ALLOC (&obj_callbacks)

static size_t live_allocations(void)
{
    pthread_mutex_lock(&alloc_lock);
    const size_t n = live_allocs;
    pthread_mutex_unlock(&alloc_lock);
    return n;
}

/* After the objects created since `before` were destroyed: an error when some of their allocations are still live. */
static int check_destroyed(size_t before, const char *what, char *err, size_t errlen)
{
    const size_t now = live_allocations();
    if (now <= before)
        return 0;
    snprintf(err, errlen, "%s left %zu driver allocations live after destroying its objects (a Vulkan object not "
             "destroyed)", what, now - before);
    return -1;
}

/* ---- the device context (created once) ---- */

static struct {
    VkInstance instance;
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue;
    uint32_t family;
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;               /* cmd and fence: uploads, read-backs and poison, never a timed sample */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem;
    uint32_t subgroup, valid_bits;
    int size_control, full_subgroups;
    int int_dot, int_dot_fast; /* shaderIntegerDotProduct enabled; its signed 4x8-bit packed form accelerated */
    int fma_fused;             /* the probe found GLSL's fma fused here: the shaders' fma_f32 uses it (FMA_FUSED) */
    char fma_note[384];        /* the probe's finding, for the describe line */
    uint32_t planar2_local, planar2_rpw; /* HSDR_VULKAN_PLANAR2_SHAPE, 0 when unset (planar2_shape) */
    uint32_t stateset_subgroups;         /* HSDR_VULKAN_STATESET_SUBGROUPS, 0 when unset (stateset_shape) */
    char why[512];     /* empty when usable */
    char describe[1024];
} ctx;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER; /* one submission at a time */

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
    }
}

static int type_rank(VkPhysicalDeviceType t)
{
    return t == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 0
           : t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 1
           : t == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU    ? 2
           : t == VK_PHYSICAL_DEVICE_TYPE_CPU            ? 3
                                                         : 4;
}

static int contains_nocase(const char *hay, const char *needle)
{
    for (size_t i = 0; hay[i]; i++) {
        size_t j = 0;
        while (needle[j] && hay[i + j] && tolower((unsigned char)hay[i + j]) == tolower((unsigned char)needle[j]))
            j++;
        if (!needle[j])
            return 1;
    }
    return 0;
}

/* HSDR_VULKAN_PLANAR2_SHAPE=LOCAL,RPW (a tuning experiment): vulkan.planar2's workgroup of LOCAL invocations (a
 * multiple of the subgroup size, at most 32 subgroups and the device's limit) taking RPW rows (1..64), instead of
 * planar2_shape's rule; into ctx.planar2_local / planar2_rpw. 0, or -1 with a message. */
static int planar2_shape_knob(char *err, size_t errlen)
{
    const char *want = getenv("HSDR_VULKAN_PLANAR2_SHAPE");
    if (!want || !*want)
        return 0;
    unsigned local = 0, rpw = 0;
    char tail;
    const unsigned most = ctx.props.limits.maxComputeWorkGroupSize[0] < 32 * ctx.subgroup
                              ? ctx.props.limits.maxComputeWorkGroupSize[0]
                              : 32 * ctx.subgroup;
    if (sscanf(want, "%u,%u%c", &local, &rpw, &tail) != 2 || local == 0 || local % ctx.subgroup != 0 ||
        local > most || rpw < 1 || rpw > 64) {
        snprintf(err, errlen,
                 "HSDR_VULKAN_PLANAR2_SHAPE='%s': expected LOCAL,RPW with LOCAL a multiple of the subgroup size %u "
                 "up to %u and RPW 1..64",
                 want, ctx.subgroup, most);
        return -1;
    }
    ctx.planar2_local = local, ctx.planar2_rpw = rpw;
    return 0;
}

/* HSDR_VULKAN_STATESET_SUBGROUPS=W (a tuning experiment): vulkan.stateset's workgroup of W subgroups (1..32, within
 * the device's limit) instead of stateset_shape's rule; into ctx.stateset_subgroups. 0, or -1 with a message. */
static int stateset_shape_knob(char *err, size_t errlen)
{
    const char *want = getenv("HSDR_VULKAN_STATESET_SUBGROUPS");
    if (!want || !*want)
        return 0;
    unsigned w = 0;
    char tail;
    unsigned most = ctx.props.limits.maxComputeWorkGroupSize[0] / ctx.subgroup;
    most = most < 32 ? most : 32;
    if (sscanf(want, "%u%c", &w, &tail) != 1 || w < 1 || w > most) {
        snprintf(err, errlen, "HSDR_VULKAN_STATESET_SUBGROUPS='%s': expected W subgroups, 1..%u", want, most);
        return -1;
    }
    ctx.stateset_subgroups = w;
    return 0;
}

/* The device HSDR_VULKAN_DEVICE names (index or part of the name), else the best by type. */
static int pick_device(VkPhysicalDevice *devs, uint32_t n, char *err, size_t errlen)
{
    const char *want = getenv("HSDR_VULKAN_DEVICE");
    if (want && *want) {
        char *end;
        long idx = strtol(want, &end, 10);
        if (*end == '\0') {
            if (idx < 0 || (uint32_t)idx >= n) {
                snprintf(err, errlen, "HSDR_VULKAN_DEVICE=%s: there are %u Vulkan devices (0..%u)", want, n, n - 1);
                return -1;
            }
            return (int)idx;
        }
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(devs[i], &p);
            if (contains_nocase(p.deviceName, want))
                return (int)i;
        }
        snprintf(err, errlen, "HSDR_VULKAN_DEVICE=%s: no Vulkan device has that in its name", want);
        return -1;
    }
    int best = 0, best_rank = 99;
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(devs[i], &p);
        if (type_rank(p.deviceType) < best_rank)
            best = (int)i, best_rank = type_rank(p.deviceType);
    }
    return best;
}

static void fma_probe(void);

static void ctx_init(void)
{
    char *err = ctx.why;
    const size_t errlen = sizeof ctx.why;
    VkPhysicalDevice *devs = NULL;
    VkQueueFamilyProperties *fams = NULL;
    uint32_t n = 0;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "hsdr-bench",
                             .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VK(vkCreateInstance(&ici, NULL, &ctx.instance));
    VK(vkEnumeratePhysicalDevices(ctx.instance, &n, NULL));
    if (n == 0) {
        snprintf(err, errlen, "no Vulkan device (the loader found none: install a driver, e.g. mesa-vulkan-drivers)");
        goto fail;
    }
    devs = calloc(n, sizeof *devs);
    if (!devs) {
        snprintf(err, errlen, "out of host memory");
        goto fail;
    }
    VK(vkEnumeratePhysicalDevices(ctx.instance, &n, devs));
    const int idx = pick_device(devs, n, err, errlen);
    if (idx < 0)
        goto fail;
    ctx.phys = devs[idx];

    /* the device extensions this host can enable: subgroup size control, integer dot products (both core in 1.3) */
    const char *want_ext[2] = {VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME,
                               VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME};
    int has_ext[2] = {0, 0};
    uint32_t next = 0;
    VK(vkEnumerateDeviceExtensionProperties(ctx.phys, NULL, &next, NULL));
    VkExtensionProperties *exts = calloc(next ? next : 1, sizeof *exts);
    if (!exts) {
        snprintf(err, errlen, "out of host memory");
        goto fail;
    }
    if (vkEnumerateDeviceExtensionProperties(ctx.phys, NULL, &next, exts) == VK_SUCCESS)
        for (uint32_t i = 0; i < next; i++)
            for (int k = 0; k < 2; k++)
                has_ext[k] |= strcmp(exts[i].extensionName, want_ext[k]) == 0;
    free(exts);

    /* properties: subgroups, size control, integer dot products; features: fp64, size control, integer dot */
    VkPhysicalDeviceShaderIntegerDotProductPropertiesKHR idp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES_KHR};
    VkPhysicalDeviceSubgroupSizeControlPropertiesEXT scp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT,
        .pNext = has_ext[1] ? &idp : NULL};
    VkPhysicalDeviceSubgroupProperties sgp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
                                              .pNext = &scp};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sgp};
    vkGetPhysicalDeviceProperties2(ctx.phys, &p2);
    ctx.props = p2.properties;
    ctx.subgroup = sgp.subgroupSize;
    vkGetPhysicalDeviceMemoryProperties(ctx.phys, &ctx.mem);
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR idf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
    VkPhysicalDeviceSubgroupSizeControlFeaturesEXT scf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT,
        .pNext = has_ext[1] ? &idf : NULL};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &scf};
    vkGetPhysicalDeviceFeatures2(ctx.phys, &f2);
    const VkSubgroupFeatureFlags need_ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT |
                                            VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
    if (!f2.features.shaderFloat64) { /* 64-bit integers are word pairs in the shaders: no shaderInt64 needed */
        snprintf(err, errlen, "%s lacks shaderFloat64", ctx.props.deviceName);
        goto fail;
    }
    if (!(sgp.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) || (sgp.supportedOperations & need_ops) != need_ops ||
        ctx.subgroup < 4 || ctx.subgroup > 128) {
        snprintf(err, errlen, "%s lacks subgroup basic/ballot/arithmetic/shuffle in compute shaders (subgroup %u)",
                 ctx.props.deviceName, ctx.subgroup);
        goto fail;
    }
    if (planar2_shape_knob(err, errlen) != 0 || stateset_shape_knob(err, errlen) != 0)
        goto fail;
    /* size control: every subgroup of a pipeline at the device's subgroupSize, and full (the shaders' lanes own
     * lanes of a group by gl_SubgroupSize) */
    ctx.size_control = scf.subgroupSizeControl && (scp.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                       scp.minSubgroupSize <= ctx.subgroup && ctx.subgroup <= scp.maxSubgroupSize;
    ctx.full_subgroups = scf.computeFullSubgroups;
    ctx.int_dot = has_ext[1] && idf.shaderIntegerDotProduct;
    ctx.int_dot_fast = ctx.int_dot && idp.integerDotProduct4x8BitPackedSignedAccelerated;

    /* a compute queue with timestamps */
    vkGetPhysicalDeviceQueueFamilyProperties(ctx.phys, &n, NULL);
    fams = calloc(n, sizeof *fams);
    if (!fams) {
        snprintf(err, errlen, "out of host memory");
        goto fail;
    }
    vkGetPhysicalDeviceQueueFamilyProperties(ctx.phys, &n, fams);
    ctx.family = UINT32_MAX;
    for (uint32_t i = 0; i < n && ctx.family == UINT32_MAX; i++)
        if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].timestampValidBits > 0)
            ctx.family = i, ctx.valid_bits = fams[i].timestampValidBits;
    if (ctx.family == UINT32_MAX) {
        snprintf(err, errlen, "%s has no compute queue with timestamps", ctx.props.deviceName);
        goto fail;
    }
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = ctx.family,
                                   .queueCount = 1, .pQueuePriorities = &prio};
    VkPhysicalDeviceFeatures feats = {.shaderFloat64 = VK_TRUE};
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR idf_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR,
        .shaderIntegerDotProduct = VK_TRUE};
    VkPhysicalDeviceSubgroupSizeControlFeaturesEXT scf_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT,
        .subgroupSizeControl = ctx.size_control ? VK_TRUE : VK_FALSE,
        .computeFullSubgroups = ctx.full_subgroups ? VK_TRUE : VK_FALSE};
    if (!has_ext[0] && ctx.props.apiVersion < VK_API_VERSION_1_3)
        ctx.size_control = ctx.full_subgroups = 0, scf_on.subgroupSizeControl = scf_on.computeFullSubgroups = 0;
    const char *on_ext[2];
    uint32_t n_on = 0;
    void *chain = NULL;
    if (has_ext[0])
        on_ext[n_on++] = want_ext[0];
    if (ctx.int_dot)
        on_ext[n_on++] = want_ext[1], idf_on.pNext = chain, chain = &idf_on;
    if (ctx.size_control || ctx.full_subgroups)
        scf_on.pNext = chain, chain = &scf_on;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = chain,
                              .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci, .pEnabledFeatures = &feats,
                              .enabledExtensionCount = n_on, .ppEnabledExtensionNames = on_ext};
    VK(vkCreateDevice(ctx.phys, &dci, NULL, &ctx.dev));
    vkGetDeviceQueue(ctx.dev, ctx.family, 0, &ctx.queue);
    VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = ctx.family};
    VK(vkCreateCommandPool(ctx.dev, &cpi, NULL, &ctx.pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = ctx.pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VK(vkAllocateCommandBuffers(ctx.dev, &cai, &ctx.cmd));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK(vkCreateFence(ctx.dev, &fci, NULL, &ctx.fence));
    /* one descriptor set layout and pipeline layout for every shader: 7 storage buffers, 28 bytes of push constants */
    VkDescriptorSetLayoutBinding binds[N_BINDINGS];
    for (int i = 0; i < N_BINDINGS; i++)
        binds[i] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)i,
                                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                  .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dli = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = N_BINDINGS, .pBindings = binds};
    VK(vkCreateDescriptorSetLayout(ctx.dev, &dli, NULL, &ctx.set_layout));
    VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 7 * sizeof(uint32_t)};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &ctx.set_layout, .pushConstantRangeCount = 1,
                                      .pPushConstantRanges = &pcr};
    VK(vkCreatePipelineLayout(ctx.dev, &pli, NULL, &ctx.layout));
    fma_probe();
    const int cpu = ctx.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    snprintf(ctx.describe, sizeof ctx.describe,
             "%s (%s%s), Vulkan %u.%u.%u, driver 0x%x, subgroup %u%s, integer dot product %s, %s, timestamps %u bits x "
             "%.3g ns",
             ctx.props.deviceName, type_name(ctx.props.deviceType),
             cpu ? ": CPU emulation, times are not GPU performance numbers" : "",
             VK_API_VERSION_MAJOR(ctx.props.apiVersion), VK_API_VERSION_MINOR(ctx.props.apiVersion),
             VK_API_VERSION_PATCH(ctx.props.apiVersion), ctx.props.driverVersion, ctx.subgroup,
             ctx.size_control ? " (required)" : "",
             ctx.int_dot_fast ? "(4x8-bit packed, accelerated)" : ctx.int_dot ? "(4x8-bit packed, not accelerated)"
                                                                              : "absent",
             ctx.fma_note, ctx.valid_bits, (double)ctx.props.limits.timestampPeriod);
    free(devs);
    free(fams);
    return;
fail:
    free(devs);
    free(fams);
    if (!ctx.why[0])
        snprintf(ctx.why, sizeof ctx.why, "Vulkan initialization failed");
}

const char *hsdr_vulkan_unavailable(void)
{
    pthread_once(&ctx_once, ctx_init);
    return ctx.why[0] ? ctx.why : NULL;
}

const char *hsdr_vulkan_subgroup8_unavailable(void)
{
    static char why[640];
    const char *base = hsdr_vulkan_unavailable();
    if (base)
        return base;
    if (ctx.subgroup >= 8)
        return NULL;
    snprintf(why, sizeof why, "%s has subgroups of %u; this shader's reduce-scatter of eight phases needs 8 or more",
             ctx.props.deviceName, ctx.subgroup);
    return why;
}

const char *hsdr_vulkan_int_dot_unavailable(void)
{
    static char why[640];
    const char *base = hsdr_vulkan_unavailable();
    if (base)
        return base;
    if (ctx.int_dot)
        return NULL;
    snprintf(why, sizeof why, "%s lacks shaderIntegerDotProduct (VK_KHR_shader_integer_dot_product, core in Vulkan "
             "1.3), which this shader's OpSDot needs", ctx.props.deviceName);
    return why;
}

const char *hsdr_vulkan_int_dot8_unavailable(void)
{
    const char *why = hsdr_vulkan_int_dot_unavailable();
    return why ? why : hsdr_vulkan_subgroup8_unavailable();
}

/* ---- buffers ---- */

typedef struct {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map; /* non-NULL when the memory is host-visible and coherent */
} vkbuf;

static int find_memory(uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < ctx.mem.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (ctx.mem.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

static void buf_free(vkbuf *b)
{
    if (b->map)
        vkUnmapMemory(ctx.dev, b->mem);
    if (b->buf)
        vkDestroyBuffer(ctx.dev, b->buf, OBJ_ALLOC);
    if (b->mem)
        vkFreeMemory(ctx.dev, b->mem, OBJ_ALLOC);
    memset(b, 0, sizeof *b);
}

/* A storage buffer of `size` bytes: device-local (and mapped when also host-visible), else host memory (staging). */
static int buf_create(vkbuf *b, VkDeviceSize size, int host, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->size = size < 16 ? 16 : (size + 15) & ~(VkDeviceSize)15;
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = b->size,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VK(vkCreateBuffer(ctx.dev, &bci, OBJ_ALLOC, &b->buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx.dev, b->buf, &req);
    const VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = host ? find_memory(req.memoryTypeBits, visible)
                    : find_memory(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0)
        type = find_memory(req.memoryTypeBits, host ? 0 : visible);
    if (type < 0) {
        snprintf(err, errlen, "no memory type for a %s buffer of %llu bytes", host ? "host" : "device",
                 (unsigned long long)b->size);
        goto fail;
    }
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                                .memoryTypeIndex = (uint32_t)type};
    VK(vkAllocateMemory(ctx.dev, &mai, OBJ_ALLOC, &b->mem));
    VK(vkBindBufferMemory(ctx.dev, b->buf, b->mem, 0));
    if ((ctx.mem.memoryTypes[type].propertyFlags & visible) == visible)
        VK(vkMapMemory(ctx.dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map));
    return 0;
fail:
    buf_free(b);
    return -1;
}

/* Submit the recorded ctx.cmd and wait for it. */
static int submit_wait(char *err, size_t errlen)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &ctx.cmd};
    VK(vkResetFences(ctx.dev, 1, &ctx.fence));
    VK(vkQueueSubmit(ctx.queue, 1, &si, ctx.fence));
    VK(vkWaitForFences(ctx.dev, 1, &ctx.fence, VK_TRUE, UINT64_MAX));
    return 0;
fail:
    return -1;
}

static int begin(VkCommandBuffer cmd, char *err, size_t errlen)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VK(vkResetCommandBuffer(cmd, 0));
    VK(vkBeginCommandBuffer(cmd, &bi));
    return 0;
fail:
    return -1;
}

/* Copy between host memory and a buffer (through a staging buffer when it is not mapped). to_device: host -> b. */
static int buf_copy(vkbuf *b, VkDeviceSize off, void *host, size_t n, int to_device, char *err, size_t errlen)
{
    if (n == 0)
        return 0;
    if (b->map) {
        if (to_device)
            memcpy((char *)b->map + off, host, n);
        else
            memcpy(host, (char *)b->map + off, n);
        return 0;
    }
    vkbuf st;
    if (buf_create(&st, n, 1, err, errlen) != 0)
        return -1;
    if (to_device)
        memcpy(st.map, host, n);
    int rc = -1;
    if (begin(ctx.cmd, err, errlen) != 0)
        goto out;
    VkBufferCopy region = {.srcOffset = to_device ? 0 : off, .dstOffset = to_device ? off : 0, .size = n};
    vkCmdCopyBuffer(ctx.cmd, to_device ? st.buf : b->buf, to_device ? b->buf : st.buf, 1, &region);
    VK(vkEndCommandBuffer(ctx.cmd));
    if (submit_wait(err, errlen) != 0)
        goto out;
    if (!to_device)
        memcpy(host, st.map, n);
    rc = 0;
    goto out;
fail:
    rc = -1;
out:
    buf_free(&st);
    return rc;
}

/* ---- pipelines ---- */

/* A shader's SPIR-V (the C array glslangValidator made of it) */
typedef struct {
    const uint32_t *spv;
    size_t bytes;
} vk_shader;
#define VK_SHADER(n) {hsdr_spv_##n, sizeof hsdr_spv_##n}

static VkPipeline pipeline_create(const vk_shader *sh, uint32_t local, uint32_t rpw, uint32_t maxg, char *err,
                                  size_t errlen)
{
    VkShaderModule mod = VK_NULL_HANDLE;
    VkPipeline pipe = VK_NULL_HANDLE;
    VkShaderModuleCreateInfo smi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = sh->bytes,
                                    .pCode = sh->spv};
    VK(vkCreateShaderModule(ctx.dev, &smi, OBJ_ALLOC, &mod));
    const uint32_t spec[4] = {local, rpw, maxg, ctx.fma_fused ? VK_TRUE : VK_FALSE};
    const VkSpecializationMapEntry map[4] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {3, 12, 4}};
    VkSpecializationInfo si = {.mapEntryCount = 4, .pMapEntries = map, .dataSize = sizeof spec, .pData = spec};
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfoEXT req = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO_EXT,
        .requiredSubgroupSize = ctx.subgroup};
    VkComputePipelineCreateInfo cpi = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .pNext = ctx.size_control ? &req : NULL,
                  .flags = ctx.full_subgroups && local % ctx.subgroup == 0
                               ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT_EXT
                               : 0,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = mod, .pName = "main", .pSpecializationInfo = &si},
        .layout = ctx.layout};
    VK(vkCreateComputePipelines(ctx.dev, VK_NULL_HANDLE, 1, &cpi, OBJ_ALLOC, &pipe));
fail:
    if (mod)
        vkDestroyShaderModule(ctx.dev, mod, OBJ_ALLOC);
    return pipe;
}

/* ---- descriptor sets: every shader has the one layout of N_BINDINGS storage buffers ---- */

/* A descriptor pool for n sets. */
static int pool_create(int n, VkDescriptorPool *pool, char *err, size_t errlen)
{
    VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               .descriptorCount = (uint32_t)(N_BINDINGS * n)};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = (uint32_t)n,
                                      .poolSizeCount = 1, .pPoolSizes = &ps};
    VK(vkCreateDescriptorPool(ctx.dev, &dpi, OBJ_ALLOC, pool));
    return 0;
fail:
    return -1;
}

/* A set from pool with binding i on bufs[i]. */
static int set_create(VkDescriptorPool pool, const vkbuf *const bufs[N_BINDINGS], VkDescriptorSet *set, char *err,
                      size_t errlen)
{
    VkDescriptorSetAllocateInfo dai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                       .descriptorPool = pool, .descriptorSetCount = 1, .pSetLayouts = &ctx.set_layout};
    VK(vkAllocateDescriptorSets(ctx.dev, &dai, set));
    VkDescriptorBufferInfo info[N_BINDINGS];
    VkWriteDescriptorSet wr[N_BINDINGS];
    for (int i = 0; i < N_BINDINGS; i++) {
        info[i] = (VkDescriptorBufferInfo){.buffer = bufs[i]->buf, .offset = 0, .range = VK_WHOLE_SIZE};
        wr[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = *set,
                                       .dstBinding = (uint32_t)i, .descriptorCount = 1,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &info[i]};
    }
    vkUpdateDescriptorSets(ctx.dev, N_BINDINGS, wr, 0, NULL);
    return 0;
fail:
    return -1;
}

/* ---- the fused-fma probe ----
 * Vulkan lets a device compute GLSL's fma(a, b, c) as a multiply and an add (two roundings). fma_probe.comp runs, on
 * PROBE_N triples, the device's fma and common.glsl's fp64 emulation (fma_f32 without FMA_FUSED), and both are
 * compared with the host's fmaf (C99: one rounding). The mat-vecs are built with FMA_FUSED (fma_f32 = the device's
 * fma) where the device's fma has fmaf's bits on every triple with a normal result, and on the subnormal ones too
 * unless the emulation does not have them either: a device may flush fp32 subnormals (the H200's Vulkan driver does,
 * in its fma and, for most of them, in the emulation's fp64 -> fp32 conversion), and then neither path is exact there
 * and the faster one is taken. The note in the describe line gives all the counts.
 * The triples: products whose low half one rounding keeps and two lose (a = 1 + 2^-23 u, b = 1 + 2^-23 v,
 * c = -round(a b)), exact cancellations (+0), subnormal results, and random triples over 2^-60..2^60.
 * HSDR_VULKAN_FMA=emulate keeps the emulation on any device (to compare the two); HSDR_VULKAN_FMA=native uses the
 * device's fma unprobed (where it is not fused, `hsdr check` fails). */
enum { PROBE_N = 4096, PROBE_LOCAL = 64 };

static uint32_t probe_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 33);
}

/* triple i as a, b, c, 0 */
static void probe_triples(float *abc)
{
    uint64_t s = 0x5eedf00dULL;
    for (int i = 0; i < PROBE_N; i++) {
        float a, b, c;
        const uint32_t r = probe_rand(&s), u = r & 0xfff, v = (r >> 12) & 0xfff;
        switch (i % 4) {
        case 0: /* the low half of the product decides */
            a = 1.0f + ldexpf((float)u, -23), b = 1.0f + ldexpf((float)v, -23);
            c = -(a * b);
            break;
        case 1: /* exact cancellation, either sign */
            a = (float)(u + 1), b = (i & 4) ? -(float)(v + 1) : (float)(v + 1);
            c = -(a * b);
            break;
        case 2: /* subnormal results */
            a = ldexpf(1.0f + ldexpf((float)u, -12), -70), b = ldexpf(1.0f + ldexpf((float)v, -12), -70);
            c = ldexpf((float)(r >> 24), -149) * ((i & 4) ? -1.0f : 1.0f);
            break;
        default: { /* random magnitudes and signs */
            const uint32_t r2 = probe_rand(&s), r3 = probe_rand(&s);
            a = ldexpf(1.0f + ldexpf((float)(r & 0x7fffff), -23), (int)(r2 % 121) - 60) * ((r2 & 128) ? -1.0f : 1.0f);
            b = ldexpf(1.0f + ldexpf((float)(r3 & 0x7fffff), -23), (int)(r3 % 121) - 60);
            c = -(a * b) * (1.0f + ldexpf((float)((r2 >> 8) & 0xff), -20));
            break;
        }
        }
        abc[4 * i] = a, abc[4 * i + 1] = b, abc[4 * i + 2] = c, abc[4 * i + 3] = 0.0f;
    }
}

static int same_bits(float x, float y)
{
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Sets ctx.fma_fused and ctx.fma_note; on any failure of its own the emulation stays (and the note says why). */
static void fma_probe(void)
{
    static const vk_shader probe_shader = VK_SHADER(fma_probe);
    char err[256] = "";
    const size_t errlen = sizeof err;
    vkbuf in = {0}, native = {0}, emul = {0};
    VkPipeline pipe = VK_NULL_HANDLE;
    VkDescriptorPool dpool = VK_NULL_HANDLE;
    float *abc = malloc(sizeof(float) * 4 * PROBE_N), *got = malloc(sizeof(float) * 2 * PROBE_N);
    ctx.fma_fused = 0;
    const char *mode = getenv("HSDR_VULKAN_FMA");
    if (mode && strcmp(mode, "emulate") == 0) {
        snprintf(ctx.fma_note, sizeof ctx.fma_note, "fma emulated in fp64 (HSDR_VULKAN_FMA=emulate)");
        goto out;
    }
    if (mode && strcmp(mode, "native") == 0) { /* trusted unprobed: where it is not fused, the checks say so */
        ctx.fma_fused = 1;
        snprintf(ctx.fma_note, sizeof ctx.fma_note, "fma native, not probed (HSDR_VULKAN_FMA=native)");
        goto out;
    }
    if (!abc || !got) {
        snprintf(err, errlen, "out of host memory");
        goto fail;
    }
    probe_triples(abc);
    if (buf_create(&in, sizeof(float) * 4 * PROBE_N, 0, err, errlen) != 0 ||
        buf_create(&native, sizeof(float) * PROBE_N, 0, err, errlen) != 0 ||
        buf_create(&emul, sizeof(float) * PROBE_N, 0, err, errlen) != 0 ||
        buf_copy(&in, 0, abc, sizeof(float) * 4 * PROBE_N, 1, err, errlen) != 0 ||
        !(pipe = pipeline_create(&probe_shader, PROBE_LOCAL, 1, 1, err, errlen)))
        goto fail;
    VkDescriptorSet set;
    const vkbuf *bufs[N_BINDINGS]; /* Y the device's fma, AOUT the emulation's, every other one the triples */
    for (int i = 0; i < N_BINDINGS; i++)
        bufs[i] = i == B_Y ? &native : i == B_A ? &emul : &in;
    if (pool_create(1, &dpool, err, errlen) != 0 || set_create(dpool, bufs, &set, err, errlen) != 0)
        goto fail;
    if (begin(ctx.cmd, err, errlen) != 0)
        goto fail;
    const uint32_t push[7] = {0, PROBE_N, 0, 0, 0, 0, 0}; /* common.glsl's push constants: N the triples */
    vkCmdBindPipeline(ctx.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(ctx.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, ctx.layout, 0, 1, &set, 0, NULL);
    vkCmdPushConstants(ctx.cmd, ctx.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
    vkCmdDispatch(ctx.cmd, PROBE_N / PROBE_LOCAL, 1, 1);
    VK(vkEndCommandBuffer(ctx.cmd));
    if (submit_wait(err, errlen) != 0 || buf_copy(&native, 0, got, sizeof(float) * PROBE_N, 0, err, errlen) != 0 ||
        buf_copy(&emul, 0, got + PROBE_N, sizeof(float) * PROBE_N, 0, err, errlen) != 0)
        goto fail;
    /* per class of fmaf's result (normal, subnormal): how many of the device's fma and of the emulation have its
     * bits */
    int normal = 0, normal_ok = 0, emul_normal_ok = 0, sub = 0, sub_ok = 0, sub_zero = 0, emul_sub_ok = 0, first = -1;
    for (int i = 0; i < PROBE_N; i++) {
        const float want = fmaf(abc[4 * i], abc[4 * i + 1], abc[4 * i + 2]), n = got[i], e = got[PROBE_N + i];
        if (fpclassify(want) == FP_SUBNORMAL) {
            sub++, sub_ok += same_bits(n, want), sub_zero += n == 0.0f, emul_sub_ok += same_bits(e, want);
        } else {
            normal++, normal_ok += same_bits(n, want), emul_normal_ok += same_bits(e, want);
            if (!same_bits(n, want) && first < 0)
                first = i;
        }
    }
    ctx.fma_fused = normal_ok == normal && (sub_ok == sub || emul_sub_ok < sub);
    char counts[192];
    snprintf(counts, sizeof counts,
             "fmaf's bits on %d of %d normal results (emulated: %d) and %d of %d subnormal ones (%d flushed to zero; "
             "emulated: %d)",
             normal_ok, normal, emul_normal_ok, sub_ok, sub, sub_zero, emul_sub_ok);
    if (ctx.fma_fused)
        snprintf(ctx.fma_note, sizeof ctx.fma_note, "fma fused (probed: %s)", counts);
    else if (first >= 0)
        snprintf(ctx.fma_note, sizeof ctx.fma_note,
                 "fma not fused (probed: %s; first fma(%a, %a, %a) = %a, fmaf %a): fp64 emulation", counts,
                 (double)abc[4 * first], (double)abc[4 * first + 1], (double)abc[4 * first + 2], (double)got[first],
                 (double)fmaf(abc[4 * first], abc[4 * first + 1], abc[4 * first + 2]));
    else
        snprintf(ctx.fma_note, sizeof ctx.fma_note,
                 "fma fused but flushing subnormals the emulation keeps (probed: %s): fp64 emulation", counts);
    goto out;
fail:
    snprintf(ctx.fma_note, sizeof ctx.fma_note, "fma emulated in fp64 (the probe failed: %.100s)", err);
out:
    if (dpool)
        vkDestroyDescriptorPool(ctx.dev, dpool, OBJ_ALLOC);
    if (pipe)
        vkDestroyPipeline(ctx.dev, pipe, OBJ_ALLOC);
    buf_free(&in);
    buf_free(&native);
    buf_free(&emul);
    free(abc);
    free(got);
}

/* ---- the variants' shaders and launch shapes ---- */

typedef struct vk_kernel vk_kernel;
struct vk_kernel {
    const char *name; /* for messages */
    vk_shader shader;
    int lns8;      /* activations: LNS8 codes (else Q8_0 values + scales) */
    unsigned outs; /* FLAG_A, FLAG_Q: the optional outputs it can write */
    /* local size and rows per workgroup at K, N, R on this device */
    void (*shape)(int K, int N, int R, uint32_t *local, uint32_t *rpw);
    /* f32: the activations are x as fp32 (binding ACT) and the kernel's own encode, shader pre (stage encode, a
     * 32-invocation workgroup per 128 values), writes what the mat-vec reads into binding SCALE (scale_bytes(K)) */
    int f32;
    const vk_shader *pre;
    size_t (*scale_bytes)(int K);
    /* a dispatcher (shader, shape and the rest unused): the kernel that runs at K */
    const vk_kernel *(*pick)(int K);
    /* the weights in a layout of the kernel's own, converted on the host at create (NULL: PTQ1_0 as stored) */
    const struct vk_layout *layout;
    /* f32 without pre: x quantized to q8_1 by each workgroup into shared memory (144 bytes per 128 values) */
    int fused_q8_1;
};

/* A converted weight layout: its bytes for K x N, and the conversion of PTQ1_0 into it. */
typedef struct vk_layout {
    size_t (*bytes)(int K, int N);
    void (*convert)(const uint8_t *W, int K, int N, uint32_t *out);
} vk_layout;

/* ---- vulkan.planar2's layout (planar2.comp says what each word holds) ---- */

static size_t planar2_bytes(int K, int N)
{
    const size_t blocks = (size_t)N * (size_t)(K / 128);
    return blocks * 32 + (blocks + 1) / 2 * 4;
}

static void planar2_convert(const uint8_t *W, int K, int N, uint32_t *out)
{
    const size_t blocks = (size_t)N * (size_t)(K / 128);
    uint32_t *scales = out + 8 * blocks;
    for (size_t b = 0; b < blocks; b++) {
        const uint8_t *blk = W + b * BLOCK_BYTES;
        uint8_t digits[26][5]; /* digit n of byte i (spec/ptq1_0.md section 1) */
        for (int i = 0; i < 26; i++)
            hsdr_ptq1_0_decode_byte_int(blk[i], digits[i]);
        uint32_t *w = out + 8 * b;
        for (int sub = 0; sub < 2; sub++) {
            uint32_t p4 = 0;
            for (int i = 0; i < 3; i++) {
                uint32_t c = 0;
                for (int k = 0; k < 4; k++) {
                    const uint8_t *dg = digits[12 * sub + 4 * i + k];
                    for (int t = 0; t < 4; t++)
                        c |= (uint32_t)dg[t] << (8 * k + 2 * t);
                    p4 |= (uint32_t)dg[4] << (8 * k + 2 * i);
                }
                w[3 * sub + i] = c;
            }
            for (int k = 0; k < 4; k++) { /* the qh digit of weight 120 + 4 sub + k: byte 24 + (j & 1), digit j / 2 */
                const int j = 4 * sub + k;
                p4 |= (uint32_t)digits[24 + (j & 1)][j >> 1] << (8 * k + 6);
            }
            w[6 + sub] = p4;
        }
        const uint32_t d = hsdr_ptq1_0_d_bits(blk);
        scales[b / 2] = (b & 1) ? (scales[b / 2] & 0xffffu) | d << 16 : d;
    }
}

static const vk_layout planar2_layout = {planar2_bytes, planar2_convert};

/* the weights' bytes on the device for kernel k at K x N */
static size_t weight_bytes(const vk_kernel *k, int K, int N)
{
    return k->layout ? k->layout->bytes(K, N) : (size_t)N * (size_t)(K / 128) * BLOCK_BYTES;
}

/* production: RPW rows of G blocks in shared memory (8 bytes a block), half the device's limit at most */
static void production_shape(int K, int N, int R, uint32_t *local, uint32_t *rpw)
{
    (void)N, (void)R;
    const uint32_t G = (uint32_t)K / 128, limit = ctx.props.limits.maxComputeSharedMemorySize / 2;
    uint32_t rows = limit / (8 * G);
    rows = rows < 1 ? 1 : rows > 64 ? 64 : rows;
    *local = 64 > ctx.subgroup ? 64 : ctx.subgroup;
    *rpw = rows;
}

/* one subgroup per row: 4 subgroups a workgroup */
static void row_per_subgroup_shape(int K, int N, int R, uint32_t *local, uint32_t *rpw)
{
    (void)K, (void)N, (void)R;
    *local = 4 * ctx.subgroup;
    *rpw = 4;
}

/* the fork's workgroup for its one-column mat-vecs on NVIDIA after Turing (docs/vulkan-production.md sections 3,
 * 3b): four subgroups where N <= 8192 and K >= 1024, else one */
static uint32_t fork_local(int K, int N)
{
    return (N <= 8192 && K >= 1024 ? 4 : 1) * ctx.subgroup;
}

/* the fork's integer-dot mat-vec: 4 rows a workgroup */
static void mmvq_shape(int K, int N, int R, uint32_t *local, uint32_t *rpw)
{
    (void)R;
    *local = fork_local(K, N);
    *rpw = 4;
}

/* vulkan.planar2's workgroup: the fork's (mmvq_shape), so that y has vulkan.mmvq's bits; HSDR_VULKAN_PLANAR2_SHAPE
 * forces another for a sweep, the order of the fp32 sums following it (hsdr_vulkan_planar2_order). One subgroup
 * taking up to 16 rows was measured slower on the H200 (perf notes, issue 19 step 7: 8 warps an SM). */
static void planar2_shape(int K, int N, int R, uint32_t *local, uint32_t *rpw)
{
    if (ctx.planar2_local) {
        *local = ctx.planar2_local, *rpw = ctx.planar2_rpw;
        return;
    }
    mmvq_shape(K, N, R, local, rpw);
}

/* the fork's fp32 dequantizing mat-vec: 2 rows a workgroup */
static void dmmv_shape(int K, int N, int R, uint32_t *local, uint32_t *rpw)
{
    (void)R;
    *local = fork_local(K, N);
    *rpw = 2;
}

/* block_q8_1_x4: 144 bytes per 128 values */
static size_t q8_1_x4_bytes(int K)
{
    return (size_t)K / 128 * 144;
}

/* state sets: a workgroup of W subgroups takes a tile of R rows, its subgroups splitting the states' masks and the
 * rows; W = the largest power of two <= min(R, 8) (measured on the H200, issue 19 step 10: one subgroup is best at
 * R = 1, where a tile has one row, eight at R = 8 and 32, as cuda.stateset's CTA of 8 warps);
 * HSDR_VULKAN_STATESET_SUBGROUPS forces another W for a sweep */
static void stateset_shape(int K, int N, int R, uint32_t *local, uint32_t *rpw)
{
    (void)K, (void)N;
    uint32_t w = 1;
    while (w < 8 && 2 * w <= (uint32_t)R)
        w *= 2;
    if (ctx.stateset_subgroups)
        w = ctx.stateset_subgroups;
    while (w > 1 && w * ctx.subgroup > ctx.props.limits.maxComputeWorkGroupSize[0])
        w /= 2;
    *local = w * ctx.subgroup;
    *rpw = R > 0 ? (uint32_t)R : 1u;
}

static const vk_shader quantize_q8_1 = VK_SHADER(quantize_q8_1);
static const vk_kernel k_q8_0 = {.name = "q8_0", .shader = VK_SHADER(production), .shape = production_shape};
static const vk_kernel k_q8_0_dot = {.name = "q8_0_dot", .shader = VK_SHADER(q8_0_dot), .shape = production_shape};
static const vk_kernel k_mmvq = {.name = "mmvq", .shader = VK_SHADER(mmvq), .shape = mmvq_shape, .f32 = 1,
                                 .pre = &quantize_q8_1, .scale_bytes = q8_1_x4_bytes};
static const vk_kernel k_planar2 = {.name = "planar2", .shader = VK_SHADER(planar2), .shape = planar2_shape, .f32 = 1,
                                    .pre = &quantize_q8_1, .scale_bytes = q8_1_x4_bytes, .layout = &planar2_layout};
static const vk_kernel k_planar2_fused = {.name = "planar2_fused", .shader = VK_SHADER(planar2_fused),
                                          .shape = planar2_shape, .f32 = 1, .layout = &planar2_layout,
                                          .fused_q8_1 = 1};
static const vk_kernel k_dmmv = {.name = "dmmv", .shader = VK_SHADER(dmmv), .shape = dmmv_shape, .f32 = 1};
static const vk_kernel k_direct = {.name = "direct", .shader = VK_SHADER(direct), .lns8 = 1, .outs = FLAG_A,
                                   .shape = row_per_subgroup_shape};
static const vk_kernel k_q1516 = {.name = "q1516", .shader = VK_SHADER(q1516), .lns8 = 1, .outs = FLAG_A | FLAG_Q,
                                  .shape = row_per_subgroup_shape};
static const vk_kernel k_stateset = {.name = "stateset", .shader = VK_SHADER(stateset), .lns8 = 1, .outs = FLAG_A,
                                     .shape = stateset_shape};

/* the fork's one-column dispatch on NVIDIA at 5a398c96 (docs/vulkan-production.md sections 1, 3, 3b): the q8_1
 * integer-dot mat-vec above K = 4096, the fp32 dequantizing one up to it */
static const vk_kernel *production_pick(int K)
{
    return K > 4096 ? &k_mmvq : &k_dmmv;
}
/* the kernel that runs at K: k itself, or the one a dispatcher picks */
static const vk_kernel *kernel_at(const vk_kernel *k, int K)
{
    return k->pick ? k->pick(K) : k;
}
static const vk_kernel k_production = {.name = "production", .f32 = 1, .pick = production_pick};

/* ---- the device ops ---- */

/* A run's own clock: a command pool with one command buffer, a fence and two timestamp queries. A sample is
 * mark(0) (begin, reset the queries, top-of-pipe timestamp), the recorded launches, mark(1) (bottom-of-pipe timestamp,
 * end, submit) and elapsed() (wait, read the timestamps). Each run has its own, so uploads (ctx.cmd) and other runs
 * never reset a buffer that is being recorded or is in flight; its objects count in the allocation check. */
typedef enum { CLOCK_IDLE, CLOCK_OPEN, CLOCK_PENDING } clock_state;
typedef struct {
    VkCommandPool pool;
    VkCommandBuffer cmd; /* freed with pool */
    VkFence fence;
    VkQueryPool queries;
    clock_state state;   /* OPEN: between the marks; PENDING: submitted, elapsed() not yet called */
    int launches;        /* recorded since mark(0): each after the first waits for the one before */
} vkclock;

typedef enum { RUN_MATVEC, RUN_READ, RUN_TOKEN } run_kind;
enum { TOKEN_BARRIERS_ALL, TOKEN_BARRIERS_ENCODE, TOKEN_BARRIERS_NONE }; /* token_barriers */

struct hsdr_device_run {
    run_kind kind;
    vkclock clock;
    const vk_kernel *k;             /* RUN_MATVEC */
    int K, N, R, G, e;
    int ncopies;                    /* RUN_TOKEN: 1 */
    vkbuf *w;                       /* ncopies weight copies (RUN_READ: the buffers it reads) */
    vkbuf act, scale, y, A, qg, qr; /* RUN_READ: y is the sink */
    unsigned flags;                 /* outputs written (FLAG_A, FLAG_Q) */
    VkPipeline pipe, pre;           /* the mat-vec; the kernel's own encode (vk_kernel.pre) or none */
    VkDescriptorPool dpool;
    VkDescriptorSet *sets;          /* one per copy */
    uint32_t local, rpw;
    uint32_t n16;                   /* RUN_READ: 16-byte words in a copy */
    hsdr_device_run **runs;         /* RUN_TOKEN: the runs it launches (not owned: they outlive it), nruns of them */
    int nruns;
    int barriers;                   /* RUN_TOKEN: which barriers it records (token_barriers) */
};

static const char *run_name(const hsdr_device_run *r)
{
    return r->kind == RUN_READ ? "read" : r->kind == RUN_TOKEN ? "token" : r->k->name;
}

static void clock_free(vkclock *c)
{
    if (c->queries)
        vkDestroyQueryPool(ctx.dev, c->queries, OBJ_ALLOC);
    if (c->fence)
        vkDestroyFence(ctx.dev, c->fence, OBJ_ALLOC);
    if (c->pool)
        vkDestroyCommandPool(ctx.dev, c->pool, OBJ_ALLOC);
    memset(c, 0, sizeof *c);
}

/* On failure the caller's run_destroy frees what was made. */
static int clock_create(vkclock *c, char *err, size_t errlen)
{
    VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = ctx.family};
    VK(vkCreateCommandPool(ctx.dev, &cpi, OBJ_ALLOC, &c->pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = c->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VK(vkAllocateCommandBuffers(ctx.dev, &cai, &c->cmd));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK(vkCreateFence(ctx.dev, &fci, OBJ_ALLOC, &c->fence));
    VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
    VK(vkCreateQueryPool(ctx.dev, &qpi, OBJ_ALLOC, &c->queries));
    c->state = CLOCK_IDLE;
    return 0;
fail:
    return -1;
}

static void run_destroy(hsdr_device_run *r)
{
    if (!r)
        return;
    if (ctx.dev)
        vkDeviceWaitIdle(ctx.dev); /* a sample still in flight, or uploads */
    clock_free(&r->clock);
    for (int i = 0; r->w && i < r->ncopies; i++)
        buf_free(&r->w[i]);
    free(r->w);
    buf_free(&r->act);
    buf_free(&r->scale);
    buf_free(&r->y);
    buf_free(&r->A);
    buf_free(&r->qg);
    buf_free(&r->qr);
    if (r->pipe)
        vkDestroyPipeline(ctx.dev, r->pipe, OBJ_ALLOC);
    if (r->pre)
        vkDestroyPipeline(ctx.dev, r->pre, OBJ_ALLOC);
    if (r->dpool)
        vkDestroyDescriptorPool(ctx.dev, r->dpool, OBJ_ALLOC);
    free(r->sets);
    free(r->runs);
    free(r);
}

/* The descriptor pool and one set per copy: binding B_W the copy, the others the run's buffers, or every one of them
 * `sink` when given (the read run's shader touches only B_W and the sink at B_Y). */
static int sets_create(hsdr_device_run *r, const vkbuf *sink, char *err, size_t errlen)
{
    if (pool_create(r->ncopies, &r->dpool, err, errlen) != 0)
        return -1;
    for (int c = 0; c < r->ncopies; c++) {
        const vkbuf *bufs[N_BINDINGS] = {&r->w[c], &r->act, &r->scale, &r->y, &r->A, &r->qg, &r->qr};
        if (sink)
            for (int i = 0; i < N_BINDINGS; i++)
                bufs[i] = i == B_W ? bufs[i] : sink;
        if (set_create(r->dpool, bufs, &r->sets[c], err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* A run with its clock and room for ncopies copies and their sets. */
static hsdr_device_run *run_alloc(run_kind kind, int ncopies, char *err, size_t errlen)
{
    hsdr_device_run *r = calloc(1, sizeof *r);
    if (!r || !(r->w = calloc((size_t)ncopies, sizeof *r->w)) || !(r->sets = calloc((size_t)ncopies, sizeof *r->sets))) {
        snprintf(err, errlen, "out of host memory");
        run_destroy(r);
        return NULL;
    }
    r->kind = kind, r->ncopies = ncopies;
    if (clock_create(&r->clock, err, errlen) != 0) {
        run_destroy(r);
        return NULL;
    }
    return r;
}

/* The mat-vec run's buffers, pipeline (its launch shape) and one descriptor set per weight copy; outs: the optional
 * outputs to allocate. */
static int run_create(const vk_kernel *k, int K, int N, int R, const uint8_t *W, int ncopies, unsigned outs,
                      hsdr_device_run **out, char *err, size_t errlen)
{
    k = kernel_at(k, K);
    hsdr_device_run *r = run_alloc(RUN_MATVEC, ncopies, err, errlen);
    if (!r)
        return -1;
    r->k = k, r->K = K, r->N = N, r->R = R, r->G = K / 128, r->flags = outs & k->outs;
    const size_t wbytes = weight_bytes(k, K, N);
    uint32_t *conv = NULL;
    if (k->layout) { /* the kernel's own layout, converted here once (not timed) */
        if (!(conv = malloc(wbytes))) {
            snprintf(err, errlen, "out of host memory (%zu bytes for the %s layout)", wbytes, k->name);
            goto fail;
        }
        k->layout->convert(W, K, N, conv);
    }
    for (int c = 0; c < ncopies; c++)
        if (buf_create(&r->w[c], wbytes, 0, err, errlen) != 0 ||
            buf_copy(&r->w[c], 0, conv ? (void *)conv : (void *)W, wbytes, 1, err, errlen) != 0) {
            free(conv);
            goto fail;
        }
    free(conv);
    if (buf_create(&r->act, (k->f32 ? sizeof(float) : 1) * (size_t)K, 0, err, errlen) != 0 ||
        buf_create(&r->scale, k->scale_bytes ? k->scale_bytes(K) : sizeof(float) * (size_t)(K / 32), 0, err,
                   errlen) != 0 ||
        buf_create(&r->y, sizeof(float) * (size_t)N, 0, err, errlen) != 0 ||
        buf_create(&r->A, (r->flags & FLAG_A) ? sizeof(int32_t) * 8 * (size_t)N * r->G : 16, 0, err, errlen) != 0 ||
        buf_create(&r->qg, (r->flags & FLAG_Q) ? sizeof(int64_t) * (size_t)N * r->G : 16, 0, err, errlen) != 0 ||
        buf_create(&r->qr, (r->flags & FLAG_Q) ? sizeof(int64_t) * (size_t)N : 16, 0, err, errlen) != 0)
        goto fail;
    k->shape(K, N, R, &r->local, &r->rpw);
    if (k->fused_q8_1 && 144u * (uint32_t)r->G + 4u * 32u * r->rpw > ctx.props.limits.maxComputeSharedMemorySize) {
        snprintf(err, errlen, "%s at K = %d: its workgroup's q8_1 copy of x (%d bytes) and row sums exceed the "
                 "device's %u bytes of shared memory", k->name, K, 144 * r->G,
                 ctx.props.limits.maxComputeSharedMemorySize);
        goto fail;
    }
    if (!(r->pipe = pipeline_create(&k->shader, r->local, r->rpw, (uint32_t)r->G, err, errlen)) ||
        (k->pre && !(r->pre = pipeline_create(k->pre, 32, 1, (uint32_t)r->G, err, errlen))) ||
        sets_create(r, NULL, err, errlen) != 0)
        goto fail;
    *out = r;
    return 0;
fail:
    run_destroy(r);
    return -1;
}

static int vk_create(const hsdr_variant *v, const hsdr_exec *e, const uint8_t *ptq1_0, int ncopies,
                     hsdr_device_run **run, double *convert_ns, size_t *footprint, char *err, size_t errlen)
{
    const char *why = v->unavailable ? v->unavailable() : hsdr_vulkan_unavailable();
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (e->cols != 1) {
        snprintf(err, errlen, "%s: %d activation columns asked for; the Vulkan kernels take exactly one", v->name,
                 e->cols);
        return -1;
    }
    if (ncopies < 1) {
        snprintf(err, errlen, "%s: %d weight copies asked for; at least one is needed", v->name, ncopies);
        return -1;
    }
    pthread_mutex_lock(&ctx_lock);
    const int rc = run_create((const vk_kernel *)v->device->impl, e->K, e->N, e->R, ptq1_0, ncopies, 0, run, err,
                              errlen);
    pthread_mutex_unlock(&ctx_lock);
    *convert_ns = 0.0;
    const vk_kernel *k = (const vk_kernel *)v->device->impl;
    *footprint = weight_bytes(kernel_at(k, e->K), e->K, e->N);
    return rc;
}

/* Encode x on the host as the kernel reads it (or, without x, take the LNS8 codes with pre-scale prescale_e) and
 * upload it (not timed). */
static int upload_act(hsdr_device_run *r, const float *x, const uint8_t *codes, int prescale_e, char *err,
                      size_t errlen)
{
    const size_t K = (size_t)r->K;
    if (r->k->f32) { /* the kernel encodes x itself */
        if (!x) {
            snprintf(err, errlen, "vulkan.%s: the kernel quantizes x itself and was given LNS8 codes instead",
                     r->k->name);
            return -1;
        }
        return buf_copy(&r->act, 0, (void *)x, sizeof(float) * K, 1, err, errlen);
    }
    uint8_t *bytes = malloc(K);
    float *scales = malloc(sizeof(float) * (K / 32));
    int rc = -1;
    if (!bytes || !scales)
        snprintf(err, errlen, "out of host memory");
    else if (hsdr_device_activations(x, codes, prescale_e, K, r->k->lns8, bytes, scales, &r->e, err, errlen) == 0 &&
             (r->k->lns8 || buf_copy(&r->scale, 0, scales, sizeof(float) * (K / 32), 1, err, errlen) == 0))
        rc = buf_copy(&r->act, 0, bytes, K, 1, err, errlen);
    free(bytes);
    free(scales);
    return rc;
}

/* A mat-vec run whose clock is idle: set_input and output must not touch buffers a recorded or submitted sample
 * uses. */
static int idle_matvec(const hsdr_device_run *r, const char *op, char *err, size_t errlen)
{
    if (r->kind != RUN_MATVEC) {
        snprintf(err, errlen, "%s on the Vulkan %s run: only a mat-vec run has activations and outputs", op,
                 run_name(r));
        return -1;
    }
    if (r->clock.state != CLOCK_IDLE) {
        snprintf(err, errlen, "%s on the Vulkan %s run inside a sample (%s): call it before mark(run, 0) or after "
                 "elapsed()", op, run_name(r), r->clock.state == CLOCK_OPEN ? "between the marks" : "in flight");
        return -1;
    }
    return 0;
}

static int input_locked(hsdr_device_run *r, const float *x, const uint8_t *codes, int prescale_e, char *err,
                        size_t errlen)
{
    if (idle_matvec(r, "set_input", err, errlen) != 0)
        return -1;
    return upload_act(r, x, codes, prescale_e, err, errlen);
}

static int vk_set_input(hsdr_device_run *r, const float *x, char *err, size_t errlen)
{
    pthread_mutex_lock(&ctx_lock);
    const int rc = input_locked(r, x, NULL, 0, err, errlen);
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}

static void barrier(VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0,
                         NULL, 0, NULL);
}

/* The dispatches of one full matvec of run r on weight copy `copy` (in chunks of at most the device's workgroup
 * count); a barrier between its encode and its mat-vec unless encode_barrier is 0 (a timing experiment only:
 * token_barriers). */
static void record(VkCommandBuffer cmd, const hsdr_device_run *r, int copy, int stage, int encode_barrier)
{
    const uint32_t cap = ctx.props.limits.maxComputeWorkGroupCount[0];
    if (stage == HSDR_STAGE_ENCODE && !r->pre) /* a kernel that reads x as it is has no encode */
        return;
    if (r->pre && stage != HSDR_STAGE_REDUCE) { /* the kernel's encode: a workgroup per 128 values */
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->pre);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, ctx.layout, 0, 1, &r->sets[copy], 0, NULL);
        const uint32_t pc[7] = {(uint32_t)r->K, (uint32_t)r->N, (uint32_t)r->G, 0, 0, 0, 0};
        vkCmdPushConstants(cmd, ctx.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
        vkCmdDispatch(cmd, (uint32_t)r->G, 1, 1); /* G is far below any device's limit on a group count */
        if (stage == HSDR_STAGE_ENCODE)
            return;
        if (encode_barrier)
            barrier(cmd);
    }
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipe);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, ctx.layout, 0, 1, &r->sets[copy], 0, NULL);
    const uint32_t groups = ((uint32_t)r->N + r->rpw - 1) / r->rpw;
    for (uint32_t g0 = 0; g0 < groups; g0 += cap) {
        const uint32_t pc[7] = {(uint32_t)r->K, (uint32_t)r->N, (uint32_t)r->G, (uint32_t)r->e, r->flags,
                                (uint32_t)r->R, g0 * r->rpw};
        vkCmdPushConstants(cmd, ctx.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
        vkCmdDispatch(cmd, groups - g0 < cap ? groups - g0 : cap, 1, 1);
    }
}

enum { READ_LOCAL = 256, READ_GROUPS = 8 * 132 }; /* enough workgroups of 256 to fill a large GPU */

/* The read run's one dispatch over copy `copy`. */
static void record_read(VkCommandBuffer cmd, const hsdr_device_run *r, int copy)
{
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipe);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, ctx.layout, 0, 1, &r->sets[copy], 0, NULL);
    const uint32_t pc[7] = {r->n16, 0, 0, 0, 0, 0, 0};
    vkCmdPushConstants(cmd, ctx.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
    vkCmdDispatch(cmd, READ_GROUPS, 1, 1);
}

static int enqueue_locked(hsdr_device_run *r, int copy, int stage, char *err, size_t errlen)
{
    vkclock *c = &r->clock;
    if (c->state != CLOCK_OPEN) {
        snprintf(err, errlen, "enqueue on the Vulkan %s run outside a sample: mark(run, 0) first", run_name(r));
        return -1;
    }
    if (copy < 0 || copy >= r->ncopies) {
        snprintf(err, errlen, "enqueue on the Vulkan %s run: weight copy %d of %d", run_name(r), copy, r->ncopies);
        return -1;
    }
    if (stage >= 0 && r->kind != RUN_MATVEC) {
        snprintf(err, errlen, "enqueue on the Vulkan %s run: stage %s; it has only its full launch (stage -1)",
                 run_name(r), hsdr_stage_name((hsdr_stage)stage));
        return -1;
    }
    if (stage >= 0 && stage != HSDR_STAGE_REDUCE && !(stage == HSDR_STAGE_ENCODE && r->k->f32)) {
        /* the encode runs on the host, but for a kernel that takes x itself: its encode dispatch (none where it reads
         * x as it is: vulkan.production at K <= 4096), or those two */
        snprintf(err, errlen, "stage %s has no separate Vulkan dispatch", hsdr_stage_name((hsdr_stage)stage));
        return -1;
    }
    if (c->launches++ > 0)
        barrier(c->cmd); /* consecutive launches of one sample may be dependent */
    switch (r->kind) {
    case RUN_MATVEC: record(c->cmd, r, copy, stage, 1); break;
    case RUN_READ: record_read(c->cmd, r, copy); break;
    case RUN_TOKEN:
        for (int i = 0; i < r->nruns; i++) {
            if (i && r->barriers == TOKEN_BARRIERS_ALL)
                barrier(c->cmd); /* a token's GEMVs are dependent */
            record(c->cmd, r->runs[i], 0, -1, r->barriers != TOKEN_BARRIERS_NONE);
        }
        break;
    }
    return 0;
}

static int vk_enqueue(hsdr_device_run *r, int copy, int stage, unsigned skip, unsigned twice, char *err,
                      size_t errlen)
{
    (void)skip, (void)twice; /* nothing is ablatable: the encode runs on the host; the dispatch is one stage */
    pthread_mutex_lock(&ctx_lock);
    const int rc = enqueue_locked(r, copy, stage, err, errlen);
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}

/* mark 0: begin the run's command buffer, reset its queries, the top-of-pipe timestamp; mark 1: the bottom-of-pipe
 * timestamp, end, submit with the run's fence (elapsed() waits for it). */
static int mark_locked(hsdr_device_run *r, int end, char *err, size_t errlen)
{
    vkclock *c = &r->clock;
    if (!end) {
        if (c->state != CLOCK_IDLE) {
            snprintf(err, errlen, "mark(run, 0) on the Vulkan %s run: %s", run_name(r),
                     c->state == CLOCK_OPEN ? "its sample is already open (mark(run, 1) missing)"
                                            : "its last sample is in flight (elapsed() missing)");
            return -1;
        }
        if (begin(c->cmd, err, errlen) != 0)
            return -1;
        vkCmdResetQueryPool(c->cmd, c->queries, 0, 2);
        vkCmdWriteTimestamp(c->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, c->queries, 0);
        c->state = CLOCK_OPEN, c->launches = 0;
        return 0;
    }
    if (c->state != CLOCK_OPEN) {
        snprintf(err, errlen, "mark(run, 1) on the Vulkan %s run without mark(run, 0)", run_name(r));
        return -1;
    }
    c->state = CLOCK_IDLE; /* until the submission succeeds: the next mark(run, 0) begins afresh */
    vkCmdWriteTimestamp(c->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->queries, 1);
    VK(vkEndCommandBuffer(c->cmd));
    VK(vkResetFences(ctx.dev, 1, &c->fence));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &c->cmd};
    VK(vkQueueSubmit(ctx.queue, 1, &si, c->fence));
    c->state = CLOCK_PENDING;
    return 0;
fail:
    return -1;
}

static int vk_mark(hsdr_device_run *r, int end, char *err, size_t errlen)
{
    pthread_mutex_lock(&ctx_lock);
    const int rc = mark_locked(r, end, err, errlen);
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}

/* Wait for the submitted sample; *ns: the time between its two timestamps, masked to timestampValidBits. */
static int elapsed_locked(hsdr_device_run *r, double *ns, char *err, size_t errlen)
{
    vkclock *c = &r->clock;
    if (c->state != CLOCK_PENDING) {
        snprintf(err, errlen, "elapsed() on the Vulkan %s run without a submitted sample (mark(run, 1) first)",
                 run_name(r));
        return -1;
    }
    c->state = CLOCK_IDLE;
    VK(vkWaitForFences(ctx.dev, 1, &c->fence, VK_TRUE, UINT64_MAX)); /* a fault in the launches surfaces here */
    uint64_t t[2];
    VK(vkGetQueryPoolResults(ctx.dev, c->queries, 0, 2, sizeof t, t, sizeof t[0],
                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    const uint64_t mask = ctx.valid_bits >= 64 ? UINT64_MAX : ((uint64_t)1 << ctx.valid_bits) - 1;
    *ns = (double)((t[1] - t[0]) & mask) * (double)ctx.props.limits.timestampPeriod;
    return 0;
fail:
    return -1;
}

static int vk_elapsed(hsdr_device_run *r, double *ns, char *err, size_t errlen)
{
    pthread_mutex_lock(&ctx_lock);
    const int rc = elapsed_locked(r, ns, err, errlen);
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}

static int vk_output(hsdr_device_run *r, float *y, char *err, size_t errlen)
{
    pthread_mutex_lock(&ctx_lock);
    int rc = idle_matvec(r, "output", err, errlen);
    if (rc == 0)
        rc = buf_copy(&r->y, 0, y, sizeof(float) * (size_t)r->N, 0, err, errlen);
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}

static void vk_destroy(hsdr_device_run *r)
{
    pthread_mutex_lock(&ctx_lock);
    run_destroy(r);
    pthread_mutex_unlock(&ctx_lock);
}

static size_t vk_l2_bytes(void)
{
    /* Vulkan does not report a last-level cache: HSDR_VULKAN_L2_BYTES, else 64 MiB (above an H200's 60 MiB L2) */
    const char *s = getenv("HSDR_VULKAN_L2_BYTES");
    const long long v = s ? atoll(s) : 0;
    return v > 0 ? (size_t)v : (size_t)64 << 20;
}

static const char *vk_describe(void)
{
    return hsdr_vulkan_unavailable() ? "Vulkan (unavailable)" : ctx.describe;
}

/* The read run: ncopies buffers of bytes/16 16-byte words (read.comp reads them; their contents do not matter), a
 * 16-byte sink, the read pipeline and one descriptor set per copy. */
static int read_build(size_t bytes, int ncopies, hsdr_device_run **out, char *err, size_t errlen)
{
    static const vk_shader read_shader = VK_SHADER(read);
    hsdr_device_run *r = run_alloc(RUN_READ, ncopies, err, errlen);
    if (!r)
        return -1;
    r->n16 = (uint32_t)(bytes / 16);
    for (int c = 0; c < ncopies; c++)
        if (buf_create(&r->w[c], (VkDeviceSize)r->n16 * 16, 0, err, errlen) != 0)
            goto fail;
    if (buf_create(&r->y, 16, 0, err, errlen) != 0 ||
        !(r->pipe = pipeline_create(&read_shader, READ_LOCAL, 1, 1, err, errlen)) ||
        sets_create(r, &r->y, err, errlen) != 0)
        goto fail;
    *out = r;
    return 0;
fail:
    run_destroy(r);
    return -1;
}

static int vk_read_create(size_t bytes, int ncopies, hsdr_device_run **run, char *err, size_t errlen)
{
    const char *why = hsdr_vulkan_unavailable();
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (bytes < 16 || bytes / 16 >= ((size_t)1 << 31) || ncopies < 1) { /* n16 < 2^31: the shader's index cannot wrap */
        snprintf(err, errlen, "Vulkan read run over %d copies of %zu bytes: the read kernel takes 16 bytes to 32 GiB a "
                 "copy, and at least one copy", ncopies, bytes);
        return -1;
    }
    pthread_mutex_lock(&ctx_lock);
    /* The allocation check: destroy() cannot report an error, so the run is built and destroyed once here (nothing
     * else is created meanwhile: the lock), and an object its destroy misses fails read_create; then the real one. */
    const size_t before = live_allocations();
    hsdr_device_run *trial = NULL;
    int rc = read_build(bytes, ncopies, &trial, err, errlen);
    if (rc == 0) {
        run_destroy(trial);
        rc = check_destroyed(before, "the Vulkan read run", err, errlen);
    }
    if (rc == 0)
        rc = read_build(bytes, ncopies, run, err, errlen);
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}

/* Which barriers a token records: HSDR_VULKAN_TOKEN_BARRIERS, an experiment on the token's structure. "all" (the
 * default, a decoder's): a barrier between consecutive GEMVs and between each GEMV's encode and its mat-vec.
 * "encode": only the latter; the token's GEMVs read inputs of their own here, so each may start while the one before
 * runs (what the barriers between GEMVs cost). "none": no barrier at all, a bound only: a mat-vec may read its
 * activations before their encode wrote them (the token is timed, never checked). -1 with a message for any other
 * value. */
static int token_barriers(char *err, size_t errlen)
{
    static const char *const names[] = {"all", "encode", "none"};
    const char *want = getenv("HSDR_VULKAN_TOKEN_BARRIERS");
    if (!want || !*want)
        return TOKEN_BARRIERS_ALL;
    for (int i = 0; i < 3; i++)
        if (strcmp(want, names[i]) == 0)
            return i;
    snprintf(err, errlen, "HSDR_VULKAN_TOKEN_BARRIERS='%s': expected all, encode or none", want);
    return -1;
}

static int vk_token_create(hsdr_device_run *const *runs, int n, hsdr_device_run **token, char *err, size_t errlen)
{
    const char *why = hsdr_vulkan_unavailable();
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (!runs || n <= 0) {
        snprintf(err, errlen, "Vulkan token of %d runs: it needs at least one", n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!runs[i] || runs[i]->kind != RUN_MATVEC) {
            snprintf(err, errlen, "Vulkan token: run %d is %s", i, runs[i] ? "not a mat-vec run" : "NULL");
            return -1;
        }
    const int barriers = token_barriers(err, errlen);
    if (barriers < 0)
        return -1;
    pthread_mutex_lock(&ctx_lock);
    int rc = -1;
    hsdr_device_run *r = run_alloc(RUN_TOKEN, 1, err, errlen);
    if (r && !(r->runs = malloc(sizeof *r->runs * (size_t)n))) {
        snprintf(err, errlen, "out of host memory");
        run_destroy(r);
        r = NULL;
    }
    if (r) {
        memcpy(r->runs, runs, sizeof *r->runs * (size_t)n);
        r->nruns = n;
        r->barriers = barriers;
        *token = r;
        rc = 0;
    }
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}

#define VK_OPS(kernel)                                                                                               \
    {.create = vk_create, .set_input = vk_set_input, .enqueue = vk_enqueue, .mark = vk_mark, .elapsed = vk_elapsed,   \
     .output = vk_output, .destroy = vk_destroy, .l2_bytes = vk_l2_bytes, .describe = vk_describe,                    \
     .read_create = vk_read_create, .token_create = vk_token_create, .impl = &(kernel)}
const hsdr_device_ops hsdr_vulkan_production_ops = VK_OPS(k_production);
const hsdr_device_ops hsdr_vulkan_q8_0_ops = VK_OPS(k_q8_0);
const hsdr_device_ops hsdr_vulkan_q8_0_dot_ops = VK_OPS(k_q8_0_dot);
const hsdr_device_ops hsdr_vulkan_mmvq_ops = VK_OPS(k_mmvq);
const hsdr_device_ops hsdr_vulkan_dmmv_ops = VK_OPS(k_dmmv);
const hsdr_device_ops hsdr_vulkan_planar2_fused_ops = VK_OPS(k_planar2_fused);
const hsdr_device_ops hsdr_vulkan_planar2_ops = VK_OPS(k_planar2);

/* The reference order of a kernel that runs with `shape` (hsdr_matvec_q8_1 in HSDR_Q8_1_INT_DOT, or with dmmv
 * HSDR_Q8_1_DEQUANT_FP32): its workgroup's subgroups (a workgroup is whole subgroups) of this device's subgroup size;
 * any valid order where it cannot run here (never used then). */
static hsdr_q8_1_order vk_order(void (*shape)(int, int, int, uint32_t *, uint32_t *), int K, int N, bool dmmv,
                                const char *unavailable)
{
    if (unavailable)
        return (hsdr_q8_1_order){HSDR_Q8_1_THREADS, 32, 1};
    uint32_t local, rpw;
    shape(K, N, 1, &local, &rpw);
    return (hsdr_q8_1_order){dmmv ? HSDR_Q8_1_DEQUANT_FP32 : HSDR_Q8_1_INT_DOT, (int)ctx.subgroup,
                             (int)(local / ctx.subgroup)};
}

hsdr_q8_1_order hsdr_vulkan_mmvq_order(int K, int N)
{
    return vk_order(mmvq_shape, K, N, false, hsdr_vulkan_int_dot_unavailable());
}

hsdr_q8_1_order hsdr_vulkan_planar2_order(int K, int N)
{
    return vk_order(planar2_shape, K, N, false, hsdr_vulkan_int_dot_unavailable());
}

hsdr_q8_1_order hsdr_vulkan_dmmv_order(int K, int N)
{
    return vk_order(dmmv_shape, K, N, true, hsdr_vulkan_unavailable());
}

hsdr_q8_1_order hsdr_vulkan_production_order(int K, int N)
{
    return production_pick(K) == &k_mmvq ? hsdr_vulkan_mmvq_order(K, N) : hsdr_vulkan_dmmv_order(K, N);
}
const hsdr_device_ops hsdr_vulkan_direct_ops = VK_OPS(k_direct);
const hsdr_device_ops hsdr_vulkan_stateset_ops = VK_OPS(k_stateset);
const hsdr_device_ops hsdr_vulkan_q1516_ops = VK_OPS(k_q1516);

/* ---- the checking interface ---- */

/* Fill the run's outputs with all-ones bits (NaN floats, -1 integers), so that nothing unwritten can pass. */
static int poison(hsdr_device_run *r, char *err, size_t errlen)
{
    if (begin(ctx.cmd, err, errlen) != 0)
        return -1;
    const vkbuf *outs[4] = {&r->y, &r->A, &r->qg, &r->qr};
    for (int i = 0; i < 4; i++)
        vkCmdFillBuffer(ctx.cmd, outs[i]->buf, 0, VK_WHOLE_SIZE, 0xffffffffu);
    VK(vkEndCommandBuffer(ctx.cmd));
    return submit_wait(err, errlen);
fail:
    return -1;
}

/* The timed path: the activations (x, or the codes of group vectors), poison, one sample of one launch, outputs. */
int hsdr_vulkan_matvec(const hsdr_variant *v, hsdr_matvec_io *io, char *err, size_t errlen)
{
    const char *why = v->unavailable ? v->unavailable() : hsdr_vulkan_unavailable();
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    const vk_kernel *k = (const vk_kernel *)v->device->impl;
    if (hsdr_device_io_check(io, k->lns8, err, errlen) != 0)
        return -1;
    const unsigned outs = (io->A ? FLAG_A : 0u) | (io->q_group && io->q_row ? FLAG_Q : 0u);
    hsdr_device_run *r = NULL;
    int rc = -1;
    pthread_mutex_lock(&ctx_lock);
    const size_t before = live_allocations();
    if (run_create(k, io->K, io->N, 1, io->weights, 1, outs, &r, err, errlen) != 0)
        goto out;
    double ns;
    const size_t G = (size_t)r->G, N = (size_t)io->N;
    if (input_locked(r, io->x, io->codes, io->prescale_e, err, errlen) != 0 || poison(r, err, errlen) != 0 ||
        mark_locked(r, 0, err, errlen) != 0 || enqueue_locked(r, 0, -1, err, errlen) != 0 ||
        mark_locked(r, 1, err, errlen) != 0 || elapsed_locked(r, &ns, err, errlen) != 0 ||
        buf_copy(&r->y, 0, io->y_f32, sizeof(float) * N, 0, err, errlen) != 0 ||
        ((r->flags & FLAG_A) && buf_copy(&r->A, 0, io->A, sizeof(int32_t) * 8 * N * G, 0, err, errlen) != 0) ||
        ((r->flags & FLAG_Q) && (buf_copy(&r->qg, 0, io->q_group, sizeof(int64_t) * N * G, 0, err, errlen) != 0 ||
                                 buf_copy(&r->qr, 0, io->q_row, sizeof(int64_t) * N, 0, err, errlen) != 0)))
        goto out;
    rc = 0;
out:
    run_destroy(r);
    if (rc == 0)
        rc = check_destroyed(before, "the run", err, errlen);
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}
