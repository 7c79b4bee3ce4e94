/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A syscall's user registers as sys_enter and sys_exit see them (struct pt_regs differs by
 * architecture; -D__TARGET_ARCH_x86 or _arm64 from the Makefile): its number, arguments
 * and result, the user stack pointer and pc, and the registers a DWARF unwinder starts
 * from (DW_* in iotrace.h). Plain loads through the tracepoint's BTF pointer, no helper
 * call: libbpf's PT_REGS_PARMn_SYSCALL read arm64's with bpf_probe_read_kernel.
 */
#ifndef IOTRACE_REGS_BPF_H
#define IOTRACE_REGS_BPF_H

#if defined(__TARGET_ARCH_x86)
#define SC_NR(r) ((r)->orig_ax)
#define SC_ARG1(r) ((r)->di)
#define SC_ARG2(r) ((r)->si)
#define SC_ARG3(r) ((r)->dx)
#define SC_ARG4(r) ((r)->r10)
#define SC_ARG5(r) ((r)->r8)
#define SC_RET(r) ((r)->ax)
#define USER_SP(r) ((r)->sp)
#define USER_PC(r) ((r)->ip)

/* A frameless wrapper's return address: the word on top of the stack (the call pushed it). */
static __always_inline __u64 wrapper_return(struct pt_regs *regs)
{
	__u64 top = 0;

	bpf_probe_read_user(&top, sizeof(top), (void *)regs->sp);
	return top;
}

static __always_inline void dwarf_regs(__u64 *dw, struct pt_regs *regs)
{
	dw[DW_RAX] = regs->ax;
	dw[DW_RDX] = regs->dx;
	dw[DW_RCX] = regs->cx;
	dw[DW_RBX] = regs->bx;
	dw[DW_RSI] = regs->si;
	dw[DW_RDI] = regs->di;
	dw[DW_RBP] = regs->bp;
	dw[DW_RSP] = regs->sp;
	dw[DW_R8] = regs->r8;
	dw[DW_R9] = regs->r9;
	dw[DW_R10] = regs->r10;
	dw[DW_R11] = regs->r11;
	dw[DW_R12] = regs->r12;
	dw[DW_R13] = regs->r13;
	dw[DW_R14] = regs->r14;
	dw[DW_R15] = regs->r15;
	dw[DW_RIP] = regs->ip;
}
#elif defined(__TARGET_ARCH_arm64)
/* x0 carries the first argument in and the result out: the argument stays in orig_x0. */
#define SC_NR(r) ((r)->syscallno)
#define SC_ARG1(r) ((r)->orig_x0)
#define SC_ARG2(r) ((r)->regs[1])
#define SC_ARG3(r) ((r)->regs[2])
#define SC_ARG4(r) ((r)->regs[3])
#define SC_ARG5(r) ((r)->regs[4])
#define SC_RET(r) ((r)->regs[0])
#define USER_SP(r) ((r)->sp)
#define USER_PC(r) ((r)->pc)

/* A frameless wrapper's return address: the link register (a call puts it there). */
static __always_inline __u64 wrapper_return(struct pt_regs *regs)
{
	return regs->regs[30];
}

static __always_inline void dwarf_regs(__u64 *dw, struct pt_regs *regs)
{
#pragma unroll
	for (int i = 0; i < 31; i++)
		dw[i] = regs->regs[i];
	dw[DW_SP] = regs->sp;
	dw[DW_PC] = regs->pc;
}
#else
#error "iotrace's programs know x86 and arm64 registers (bpf/regs.bpf.h)"
#endif

#endif /* IOTRACE_REGS_BPF_H */
