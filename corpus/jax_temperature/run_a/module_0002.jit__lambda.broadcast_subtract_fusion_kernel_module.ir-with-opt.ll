; ModuleID = '__compute_module_broadcast_subtract_fusion_kernel_module'
source_filename = "__compute_module_broadcast_subtract_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @broadcast_subtract_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
broadcast_subtract_fusion_wrapped.exit:
  %1 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %2 = load ptr, ptr %1, align 8, !invariant.load !3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3, !dereferenceable !4
  %4 = getelementptr inbounds nuw i8, ptr %2, i64 16
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !5
  %6 = getelementptr inbounds nuw i8, ptr %2, i64 32
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !4
  tail call void @llvm.experimental.noalias.scope.decl(metadata !6)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !9)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !11)
  %8 = load float, ptr %5, align 4, !invariant.load !3, !alias.scope !9, !noalias !13
  %9 = fmul float %8, 2.500000e-01
  %10 = load float, ptr %3, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %11 = fsub float %10, %9
  store float %11, ptr %7, align 4, !alias.scope !11, !noalias !15
  %12 = getelementptr inbounds nuw i8, ptr %3, i64 4
  %13 = load float, ptr %12, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %14 = fsub float %13, %9
  %15 = getelementptr inbounds nuw i8, ptr %7, i64 4
  store float %14, ptr %15, align 4, !alias.scope !11, !noalias !15
  %16 = getelementptr inbounds nuw i8, ptr %3, i64 8
  %17 = load float, ptr %16, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %18 = fsub float %17, %9
  %19 = getelementptr inbounds nuw i8, ptr %7, i64 8
  store float %18, ptr %19, align 4, !alias.scope !11, !noalias !15
  %20 = getelementptr inbounds nuw i8, ptr %3, i64 12
  %21 = load float, ptr %20, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %22 = fsub float %21, %9
  %23 = getelementptr inbounds nuw i8, ptr %7, i64 12
  store float %22, ptr %23, align 4, !alias.scope !11, !noalias !15
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 0}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 16}
!5 = !{i64 4}
!6 = !{!7}
!7 = distinct !{!7, !8, !"broadcast_subtract_fusion_wrapped: argument 0"}
!8 = distinct !{!8, !"broadcast_subtract_fusion_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"broadcast_subtract_fusion_wrapped: argument 1"}
!11 = !{!12}
!12 = distinct !{!12, !8, !"broadcast_subtract_fusion_wrapped: argument 2"}
!13 = !{!7, !12}
!14 = !{!10, !12}
!15 = !{!7, !10}
